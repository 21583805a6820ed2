import GrokBasics
import Foundation

/// ``HTTPFetching`` on libcurl: https, http and file URLs, retries with exponential backoff,
/// resumable downloads.
///
/// Each request runs on a thread of its own with a fresh libcurl handle; the backoff pauses
/// go through the injected sleeper, so tests can record them instead of waiting.
///
/// Proxies: unless ``TransferOptions/proxy`` says otherwise, libcurl reads `http_proxy`,
/// `https_proxy`, `all_proxy` and `no_proxy` from the environment.
public struct CurlFetcher: HTTPFetching {
    /// Pauses between attempts; cancellation of the calling task should end it early.
    public typealias Sleeper = @Sendable (Duration) async -> Void

    private let sleeper: Sleeper

    /// - Parameter sleeper: how backoff pauses are taken; by default `Task.sleep`.
    public init(sleeper: @escaping Sleeper = { try? await Task.sleep(for: $0) }) {
        self.sleeper = sleeper
    }

    public func fetch(
        _ url: String, ifChanged validators: Validators? = nil, options: TransferOptions = TransferOptions()
    ) async throws(NetError) -> FetchResult {
        let cancel = CancellationFlag()
        var attempt = AttemptRequest(
            url: url, options: options, sizeCap: options.sizeCap ?? TransferOptions.defaultDocumentCap,
            validators: validators, partialFile: nil, taskCancellation: cancel, progress: nil)
        attempt.deadlineAt = options.deadline.map { ContinuousClock.now.advanced(by: $0) }
        let request = attempt
        let result: Result<FetchResult, NetError> = await withTaskCancellationHandler {
            var retries = 0
            while true {
                let outcome = await Self.onThread { Transfer.run(request) }
                switch outcome.kind {
                case .success(let status, let notModified):
                    if notModified { return .success(.notModified(outcome.validators)) }
                    return .success(.fetched(Document(body: outcome.body, status: status, validators: outcome.validators)))
                case .rangeRefused:
                    return .failure(.badRange(url: url, detail: ErrorDetail("unasked_416")))
                case .failure(let error, let transient):
                    if let stop = await pauseBeforeRetry(error, transient: transient, retries: &retries, request: request, have: outcome.size) {
                        return .failure(stop)
                    }
                }
            }
        } onCancel: {
            cancel.cancel()
        }
        return try result.get()
    }

    public func download(
        _ url: String, to partialFile: String, options: TransferOptions = TransferOptions(),
        progress: (@Sendable (_ done: Int64, _ total: Int64?) -> Void)? = nil
    ) async throws(NetError) -> DownloadResult {
        let cancel = CancellationFlag()
        var attempt = AttemptRequest(
            url: url, options: options, sizeCap: options.sizeCap, validators: nil, partialFile: partialFile,
            taskCancellation: cancel, progress: progress)
        attempt.deadlineAt = options.deadline.map { ContinuousClock.now.advanced(by: $0) }
        let request = attempt
        let result: Result<DownloadResult, NetError> = await withTaskCancellationHandler {
            var retries = 0
            var attempts = 0
            var received: Int64 = 0
            var restartedAfterRefusal = false
            while true {
                attempts += 1
                let outcome = await Self.onThread { Transfer.run(request) }
                received += outcome.received
                switch outcome.kind {
                case .success(let status, _):
                    return .success(
                        DownloadResult(
                            status: status, size: outcome.size, resumedFrom: outcome.startOffset, bytesReceived: received,
                            attempts: attempts, validators: outcome.validators))
                case .rangeRefused(let total):
                    if let total, total == outcome.startOffset {
                        // The partial file already holds the whole resource.
                        return .success(
                            DownloadResult(
                                status: 416, size: total, resumedFrom: total, bytesReceived: received,
                                attempts: attempts, validators: outcome.validators))
                    }
                    if restartedAfterRefusal {
                        return .failure(.rangeNotSatisfiable(url: url, offset: outcome.startOffset))
                    }
                    // The partial file does not belong to this resource (longer, or stale): restart.
                    restartedAfterRefusal = true
                    do throws(NetError) {
                        try PartialFile(path: partialFile).restart()
                    } catch {
                        return .failure(error)
                    }
                case .failure(let error, let transient):
                    if let stop = await pauseBeforeRetry(error, transient: transient, retries: &retries, request: request, have: outcome.size) {
                        return .failure(stop)
                    }
                }
            }
        } onCancel: {
            cancel.cancel()
        }
        return try result.get()
    }

    /// Waits the backoff before the next retry, or returns the error to give up with.
    private func pauseBeforeRetry(
        _ error: NetError, transient: Bool, retries: inout Int, request: AttemptRequest, have: Int64
    ) async -> NetError? {
        guard transient, retries < request.options.maxRetries else { return error }
        retries += 1
        var pause = request.options.backoff.delay(beforeRetry: retries)
        if let deadlineAt = request.deadlineAt {
            let left = ContinuousClock.now.duration(to: deadlineAt)
            if left <= pause {
                return .deadline(url: request.url, seconds: Int(request.options.deadline?.components.seconds ?? 0))
            }
            pause = min(pause, left)
        }
        await sleeper(pause)
        if request.taskCancellation.isCancelled || request.options.cancellation?.isCancelled == true {
            return .cancelled(url: request.url, received: have)
        }
        return nil
    }

    /// Runs blocking libcurl work on a thread of its own, off the cooperative pool.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "GrokNet transfer"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
