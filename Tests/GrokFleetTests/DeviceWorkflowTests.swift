@testable import GrokFleet
import GrokLedger
import Testing

/// Walks the workflow as a caller does: every step it asks for ends as `results` says
/// (default: done), every step not reached is passed over. Returns the steps performed and
/// the steps shown as not reached, in order.
private func walk(_ workflow: inout DeviceWorkflow, inLoader: Bool = false,
                  results: [FleetStep: (StepResult, String)] = [:]) -> (performed: [FleetStep], notReached: [FleetStep]) {
    var performed: [FleetStep] = []
    var notReached: [FleetStep] = []
    var action = workflow.next(.start)
    while true {
        switch action {
        case .finish:
            return (performed, notReached)
        case .notReached(let step):
            notReached.append(step)
            action = workflow.next(.passedOver)
        case .perform(let step):
            performed.append(step)
            let (result, code) = results[step] ?? (.done, "step_done")
            action = workflow.next(.ended(DeviceWorkflow.Ending(step: step, result: result, code: code,
                                                                inLoader: step == .identify && inLoader)))
        }
    }
}

@Suite("Device workflow")
struct DeviceWorkflowTests {
    @Test("a unit in its application: connect, identify, provision, region, smoke test, firmware, reconnect, final smoke test, record")
    func order() {
        var workflow = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        let walked = walk(&workflow)
        #expect(walked.performed == [.connect, .identify, .provision, .region, .smokeTest, .firmware, .reconnect, .finalSmokeTest, .record])
        #expect(walked.notReached.isEmpty)
        #expect(workflow.changed == [.provision, .region, .smokeTest, .firmware, .reconnect, .finalSmokeTest])
    }

    @Test("a unit found in its loader is repaired first, unless verify or a profile without firmware")
    func loaderRepairFirst() {
        var repair = DeviceWorkflow(mode: .rollout, firmwareConfigured: true)
        #expect(walk(&repair, inLoader: true).performed
            == [.connect, .identify, .firmware, .reconnect, .provision, .region, .smokeTest, .finalSmokeTest, .record])
        var verify = DeviceWorkflow(mode: .verify, firmwareConfigured: true)
        #expect(walk(&verify, inLoader: true).performed
            == [.connect, .identify, .provision, .region, .smokeTest, .firmware, .reconnect, .finalSmokeTest, .record])
        var noFirmware = DeviceWorkflow(mode: .provision, firmwareConfigured: false)
        #expect(walk(&noFirmware, inLoader: true).performed.prefix(3) == [.connect, .identify, .provision])
    }

    @Test("a refusal stops the device: the later steps are not reached and the connected unit is still recorded")
    func refusalStops() {
        var workflow = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        let walked = walk(&workflow, results: [.region: (.refused, "fleet_region_not_allowed")])
        #expect(walked.performed == [.connect, .identify, .provision, .region, .record])
        #expect(walked.notReached == [.smokeTest, .firmware, .reconnect, .finalSmokeTest])
    }

    @Test("a unit that could not be connected is not recorded")
    func notConnectedNotRecorded() {
        var workflow = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        let walked = walk(&workflow, results: [.connect: (.failed, "fleet_port_unavailable")])
        #expect(walked.performed == [.connect])
        #expect(walked.notReached == [.identify])
    }

    @Test("verify goes past the differences it reports, and stops at any other failure")
    func verifyGoesOn() {
        var mismatch = DeviceWorkflow(mode: .verify, firmwareConfigured: true)
        let reported = walk(&mismatch, results: [.region: (.failed, "fleet_verify_mismatch")])
        #expect(reported.performed.last == .record && reported.notReached.isEmpty)
        #expect(mismatch.changed.isEmpty)
        var broken = DeviceWorkflow(mode: .verify, firmwareConfigured: true)
        #expect(walk(&broken, results: [.region: (.failed, "fleet_reader")]).notReached.first == .smokeTest)
    }

    @Test("a declined region stops the device; a declined update goes on to the later steps")
    func declined() {
        var region = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        #expect(walk(&region, results: [.region: (.declined, "fleet_region_declined")]).notReached.first == .smokeTest)
        var firmware = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        let walked = walk(&firmware, results: [.firmware: (.declined, "fleet_update_declined")])
        #expect(walked.notReached.isEmpty && walked.performed.contains(.finalSmokeTest))
        #expect(!firmware.changed.contains(.firmware))
    }

    @Test("an interruption ends the device at once, without the record")
    func interrupted() {
        var workflow = DeviceWorkflow(mode: .provision, firmwareConfigured: true)
        #expect(workflow.next(.start) == .perform(.connect))
        #expect(workflow.next(.ended(DeviceWorkflow.Ending(step: .connect, result: .done, code: "step_connected"))) == .perform(.identify))
        #expect(workflow.next(.interrupted) == .finish)
        #expect(workflow.state == .finished)
    }
}
