import Foundation
import GrokCommandLine
import GrokFleet

// MARK: grokctl fleet report

/// `grokctl fleet report --html FILE [--ledger L] [--rollout ID] [--profile P]`: the fleet
/// as one self-contained HTML page (docs/fleet.md, "Seeing the fleet").
struct FleetReportCommand: Command {
    static let html = OptionDeclaration.option("html", value: .valueFile, help: .optionFleetReportHtml, required: true,
                                               type: .outputFile)

    static var configuration: CommandConfiguration {
        CommandConfiguration(name: "report", abstract: .commandFleetReportAbstract, discussion: .commandFleetReportDiscussion,
                             options: [html, FleetOptions.ledger, FleetViewOptions.rollout, FleetViewOptions.profile])
    }

    /// nil: standard output (`-`).
    let outputFile: String?
    let ledgerFile: String?
    let rollout: String?
    let profileFile: String?

    init(_ values: ParsedValues) throws(CLIError) {
        guard let html = values.value(Self.html) else { throw .missingOption(option: Self.html.spelling) }
        outputFile = html == "-" ? nil : html
        ledgerFile = values.value(FleetOptions.ledger)
        if let ledgerFile, ledgerFile.isEmpty { throw .invalidValue(value: ledgerFile, option: FleetOptions.ledger.spelling) }
        rollout = try FleetViewOptions.rolloutID(values)
        profileFile = try FleetViewOptions.profileFile(values)
    }

    func run(_ context: CommandContext) throws -> ExitCode {
        let view = try FleetStatusView(location: StateDirectory.ledger(option: ledgerFile, environment: context.environment),
                                       rollout: rollout, profile: profileFile)
        let page = FleetReportPage(localizer: context.localizer, ledger: view.location, generatedAt: Date(), timeZone: view.timeZone).html(view)
        guard let outputFile else {
            context.console.write(page)
            return .success
        }
        do throws(CheckedFile.Failure) {
            try CheckedFile.write(Array(page.utf8), to: outputFile)
        } catch {
            throw OutputError(error)
        }
        context.console.say(.reportWritten, outputFile, to: .standardError)
        return .success
    }
}

/// The report page: HTML with its CSS inline and every chart drawn here as inline SVG. Its
/// Content-Security-Policy allows nothing from anywhere: only its own style sheet and its
/// one small script, each by its SHA-256. The script does not draw anything: after load it
/// writes onto `<html>` how many resources the page fetched (`data-resources`), how many
/// loads the policy refused (`data-violations`) and how many load errors happened
/// (`data-errors`), so a browser test sees that nothing came from outside.
struct FleetReportPage {
    let localizer: Localizer
    let ledger: String
    let generatedAt: Date
    /// The time zone every date on the page is shown in (the page says which).
    var timeZone: TimeZone = .current
    var language: Language { localizer.language }

    static let style = """
        body{font-family:sans-serif;margin:2em;color:#222;background:#fff;max-width:62em}
        h1{font-size:1.6em}h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
        figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}
        table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
        td:first-child,th:first-child{text-align:left}
        .why{color:#a00}.note{color:#555}
        svg.chart text{font-size:11px;fill:#333}
        """

    static let loadCheck = """
        (function(){var v=0,e=0;document.addEventListener('securitypolicyviolation',function(){v++;});\
        window.addEventListener('error',function(){e++;},true);window.addEventListener('load',function(){\
        var h=document.documentElement;h.setAttribute('data-resources',String(performance.getEntriesByType('resource').length));\
        h.setAttribute('data-violations',String(v));h.setAttribute('data-errors',String(e));h.setAttribute('data-load-check','done');});})();
        """

    /// `default-src 'none'` and nothing else but the page's own style and script, by hash.
    static var contentSecurityPolicy: String { PageSecurityPolicy.policy(style: style, script: loadCheck) }

    static let colors = (done: "#2a8a3e", failed: "#c62828", incomplete: "#f0a020", pending: "#9e9e9e", line: "#1f5fa8",
                         threshold: "#c62828")

    func html(_ view: FleetStatusView) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="\(language.rawValue)">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(escape(Self.contentSecurityPolicy))">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <script>\(Self.loadCheck)</script>
            <title>\(escape(text(.reportTitle)))</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <h1 id="report-title">\(escape(text(.reportTitle)))</h1>
            <p class="note">\(escape(text(.reportGenerated, date(generatedAt), ledger)))</p>
            <p class="note" id="time-zone">\(escape(text(.reportTimeZone, timeZone.identifier, Self.offset(timeZone, at: generatedAt))))</p>

            """
        out += "<section id=\"rollouts\">\n<h2>\(escape(text(.reportRollouts)))</h2>\n"
        if view.rollouts.isEmpty { out += "<p>\(escape(text(.reportNoRollouts)))</p>\n" }
        let status = FleetStatusText(localizer: localizer)
        for rollout in view.rollouts {
            out += "<article class=\"rollout\" data-rollout=\"\(escape(rollout.id))\">\n"
            let heading = text(.fleetStatusRollout, rollout.id, rollout.release ?? "–", status.percent(rollout.percentage),
                               status.state(rollout.state))
            out += "<h3>\(escape(heading))</h3>\n"
            if let why = status.why(rollout) { out += "<p class=\"why\">\(escape(why))</p>\n" }
            if rollout.isHalted, let tripped = rollout.trippedBy {
                out += "<p class=\"why\">\(escape(text(.fleetStatusTrippedBy, tripped)))</p>\n"
            }
            out += "<p>" + escape(status.summary(rollout)) + "</p>\n"
            out += figure(text(.reportProgress), progressChart(rollout))
            out += figure(text(.reportFailureRate), failureRateChart(rollout))
            out += figure(text(.reportByStation), stackedBars("by-station", rollout.byStation.map { (status.station($0.name), $0.counts) }))
            let revisions = rollout.byHardwareRevision.map { ($0.name.isEmpty ? "–" : $0.name, $0.counts) }
            out += figure(text(.reportByHardware), stackedBars("by-hardware", revisions))
            out += table([text(.fleetColumnStation), text(.fleetColumnDone), text(.fleetColumnFailed), text(.fleetColumnIncomplete),
                          text(.fleetColumnPending), text(.fleetColumnFailureRate)],
                         rollout.byStation.map { [status.station($0.name), String($0.counts.done), String($0.counts.failed),
                                                  String($0.counts.incomplete), String($0.counts.pending), status.rate($0.counts.failureRate)] })
            out += "<h4>\(escape(text(.reportFailedUnits)))</h4>\n"
            if rollout.failedUnits.isEmpty { out += "<p>\(escape(text(.reportNoFailedUnits)))</p>\n" }
            out += table([text(.fleetColumnSerial), text(.fleetColumnStation), text(.fleetColumnUsbPort), text(.ledgerColumnWhen),
                          text(.fleetColumnStep), text(.fleetColumnDetail)],
                         rollout.failedUnits.map { unit in
                             [unit.serial, status.station(unit.station), unit.usbPath.map { "usb:" + $0 } ?? "–", date(unit.finishedAt),
                              unit.step.map { FleetStep(rawValue: $0).map(localizer.stepName) ?? $0 } ?? "–", reason(unit)]
                         }, id: "failed-units")
            out += "<h4>\(escape(text(.reportThroughput)))</h4>\n"
            out += table([text(.fleetColumnDay), text(.fleetColumnStation), text(.fleetColumnDone), text(.fleetColumnFailed),
                          text(.fleetColumnIncomplete)],
                         rollout.throughput.map { [$0.day, status.station($0.station), String($0.counts.done), String($0.counts.failed),
                                                   String($0.counts.incomplete)] }, id: "throughput")
            if let history = status.history(rollout, timeZone: timeZone) {
                out += "<h4>\(escape(text(.reportHistory)))</h4>\n"
                out += table(history.headers, history.rows, id: "history")
            }
            out += "</article>\n"
        }
        out += "</section>\n"
        out += "<section id=\"firmware\">\n<h2>\(escape(text(.reportFirmware)))</h2>\n"
        out += figure(text(.fleetStatusFirmware, String(view.deviceCount)),
                      bars("firmware", view.firmware.map { ($0.name ?? text(.fleetStatusUnknownFirmware), Double($0.count), String($0.count)) }))
        out += "</section>\n"
        out += "<section id=\"read-rates\">\n<h2>\(escape(text(.reportReadRates)))</h2>\n"
        out += figure(text(.fleetStatusReadRates), readRatesChart(view.readRates))
        out += table([text(.fleetColumnStation), text(.fleetColumnTests), text(.fleetColumnPassed), text(.fleetColumnMinimum),
                      text(.fleetColumnMedian), text(.fleetColumnMaximum)],
                     view.readRates.map { [status.station($0.station), String($0.tests), String($0.passed), decimal($0.minimum),
                                           decimal($0.median), decimal($0.maximum)] })
        out += "</section>\n</body>\n</html>\n"
        return out
    }

    // MARK: Pieces

    func text(_ key: MessageKey, _ arguments: String...) -> String { localizer.text(key, arguments: arguments) }
    func decimal(_ value: Double, digits: Int = 1) -> String { LocaleFormat.decimal(value, digits: digits, language) }
    func date(_ value: Date) -> String { LocaleFormat.dateTime(value, language, timeZone: timeZone) }

    /// A time zone's offset from UTC at `date`: `+01:00`, `-05:30`, `±00:00` as `+00:00`.
    static func offset(_ zone: TimeZone, at date: Date) -> String {
        let seconds = zone.secondsFromGMT(for: date)
        let minutes = abs(seconds) / 60
        return (seconds < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    /// Why a unit failed: the failed step's stable code and the ledger's text, as recorded.
    func reason(_ unit: FleetStatusView.FailedUnit) -> String {
        [unit.code, unit.detail.isEmpty ? nil : unit.detail].compactMap { $0 }.joined(separator: ": ")
    }

    func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    func figure(_ caption: String, _ svg: String) -> String {
        "<figure>\n<figcaption>\(escape(caption))</figcaption>\n\(svg)</figure>\n"
    }

    func table(_ headers: [String], _ rows: [[String]], id: String? = nil) -> String {
        guard !rows.isEmpty else { return "" }
        var out = (id.map { "<table id=\"\($0)\">" } ?? "<table>") + "\n<tr>" + headers.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in rows { out += "<tr>" + row.map { "<td>\(escape($0))</td>" }.joined() + "</tr>\n" }
        return out + "</table>\n"
    }

    func svgOpen(_ name: String, width: Int, height: Int, label: String) -> String {
        "<svg class=\"chart\" data-chart=\"\(name)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" "
            + "viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(escape(label))\">\n"
    }

    func label(_ x: Double, _ y: Double, _ value: String, anchor: String = "start", name: String? = nil) -> String {
        let kind = name.map { " class=\"\($0)\"" } ?? ""
        return "<text\(kind) x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\">\(escape(value))</text>\n"
    }

    /// A coordinate: two decimals at most, always with a point (SVG's syntax, not a person's).
    func f(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.2f", rounded)
    }

    func empty(_ name: String) -> String {
        svgOpen(name, width: 640, height: 40, label: text(.reportNoData)) + label(10, 25, text(.reportNoData)) + "</svg>\n"
    }

    /// Units done, failed and pending, after each unit finished, against time; a dashed line
    /// at the stage's whole (finished and pending).
    func progressChart(_ rollout: FleetStatusView.Rollout) -> String {
        let points = rollout.progress
        guard let first = points.first, let last = points.last else { return empty("progress") }
        // The legend goes under the time axis, clear of the series.
        let (width, height, left, right, top, bottom) = (640.0, 262.0, 50.0, 20.0, 15.0, 57.0)
        let whole = max(rollout.totals.finished + rollout.totals.pending, points.map { $0.finished + $0.pending }.max() ?? 1, 1)
        let (start, span) = Self.timeAxis(first.at, last.at)
        func x(_ date: Date) -> Double { left + (width - left - right) * date.timeIntervalSince(start) / span }
        func y(_ count: Int) -> Double { height - bottom - (height - top - bottom) * Double(count) / Double(whole) }
        var out = svgOpen("progress", width: Int(width), height: Int(height), label: text(.reportProgress))
        out += axes(width: width, height: height, left: left, right: right, top: top, bottom: bottom)
        out += line("whole", left, y(whole), width - right, y(whole), stroke: "#555", extra: "stroke-dasharray=\"4 3\"")
        // Pending starts at the stage's whole (nothing finished before the first unit did).
        for (name, color, value, before) in [
            ("done", Self.colors.done, { (p: FleetStatusView.ProgressPoint) in p.done }, 0),
            ("failed", Self.colors.failed, { (p: FleetStatusView.ProgressPoint) in p.failed }, 0),
            ("pending", Self.colors.pending, { (p: FleetStatusView.ProgressPoint) in p.pending }, first.pending + first.finished),
        ] {
            var path = "M\(f(left)) \(f(y(before)))"
            for point in points { path += " H\(f(x(point.at))) V\(f(y(value(point))))" }
            path += " H\(f(width - right))"
            out += "<path class=\"series-\(name)\" data-last=\"\(value(last))\" d=\"\(path)\" fill=\"none\" stroke=\"\(color)\" "
                + "stroke-width=\"2\"/>\n"
        }
        out += label(left - 5, y(whole) + 4, String(whole), anchor: "end") + label(left - 5, y(0) + 4, "0", anchor: "end")
        out += timeLabels(start: start, span: span, left: left, right: width - right, y: height - bottom + 23)
        out += legend([(text(.fleetColumnDone), Self.colors.done), (text(.fleetColumnFailed), Self.colors.failed),
                       (text(.fleetColumnPending), Self.colors.pending), (text(.reportStageWhole), "#555")], x: left, y: height - 16)
        return out + "</svg>\n"
    }

    /// The failure rate after each unit finished, and the halt threshold (the one rule the
    /// view judges by) as a dashed line.
    func failureRateChart(_ rollout: FleetStatusView.Rollout) -> String {
        let points = rollout.progress
        guard let first = points.first, let last = points.last else { return empty("failure-rate") }
        let (width, height, left, right, top, bottom) = (640.0, 200.0, 50.0, 20.0, 15.0, 35.0)
        let threshold = rollout.threshold
        let top100 = min(1, max(points.map(\.failureRate).max() ?? 0, threshold ?? 0) * 1.25 + 0.05)
        let (start, span) = Self.timeAxis(first.at, last.at)
        func x(_ date: Date) -> Double { left + (width - left - right) * date.timeIntervalSince(start) / span }
        func y(_ rate: Double) -> Double { height - bottom - (height - top - bottom) * rate / top100 }
        var out = svgOpen("failure-rate", width: Int(width), height: Int(height), label: text(.reportFailureRate))
        out += axes(width: width, height: height, left: left, right: right, top: top, bottom: bottom)
        // A step after each unit: the rate holds until the next one finishes.
        var path = ""
        for (index, point) in points.enumerated() {
            path += index == 0 ? "M\(f(x(point.at))) \(f(y(point.failureRate)))" : " H\(f(x(point.at))) V\(f(y(point.failureRate)))"
        }
        path += " H\(f(width - right))"
        out += "<path class=\"series-failure-rate\" d=\"\(path)\" fill=\"none\" stroke=\"\(Self.colors.line)\" stroke-width=\"2\"/>\n"
        if let threshold {
            out += line("threshold", left, y(threshold), width - right, y(threshold), stroke: Self.colors.threshold,
                        extra: "stroke-dasharray=\"6 4\"")
            let percent = FleetStatusText(localizer: localizer).percent(threshold * 100)
            out += label(width - right, y(threshold) - 4, text(.reportThreshold, percent), anchor: "end")
        }
        out += label(left - 5, y(top100) + 4, decimal(top100 * 100, digits: 0) + " %", anchor: "end")
        out += label(left - 5, y(0) + 4, "0 %", anchor: "end")
        out += timeLabels(start: start, span: span, left: left, right: width - right, y: height - 12)
        return out + "</svg>\n"
    }

    /// The time axis' labels: its start at the left end and its end at the right end, so
    /// they never meet; when the two would not fit side by side, the start only.
    func timeLabels(start: Date, span: Double, left: Double, right: Double, y: Double) -> String {
        let first = date(start)
        let last = date(start.addingTimeInterval(span))
        let gap = 12.0
        var out = label(left, y, first, anchor: "start", name: "time-start")
        if Self.textWidth(first) + Self.textWidth(last) + gap <= right - left {
            out += label(right, y, last, anchor: "end", name: "time-end")
        }
        return out
    }

    /// How wide a label is drawn, at most: 11 px sans-serif, the digits, separators and most
    /// letters under 7.5 px each (a wide character counts twice).
    static func textWidth(_ text: String) -> Double { Double(TextWidth.of(text)) * 7.5 }

    /// The time axis from a little before the first unit finished to a little after the last:
    /// its start and its length in seconds.
    static func timeAxis(_ first: Date, _ last: Date) -> (start: Date, span: Double) {
        let margin = max(last.timeIntervalSince(first) * 0.05, 30)
        return (first.addingTimeInterval(-margin), last.timeIntervalSince(first) + 2 * margin)
    }

    /// One bar per name, split into done, failed, incomplete and pending.
    func stackedBars(_ name: String, _ groups: [(String, FleetStatusView.Counts)]) -> String {
        guard !groups.isEmpty else { return empty(name) }
        let (left, barWidth, row) = (140.0, 420.0, 22.0)
        let height = Double(groups.count) * row + 40
        let most = max(groups.map { $0.1.finished + $0.1.pending }.max() ?? 1, 1)
        var out = svgOpen(name, width: 640, height: Int(height), label: name)
        for (index, group) in groups.enumerated() {
            let y = 10 + Double(index) * row
            out += label(left - 6, y + 13, group.0, anchor: "end")
            var x = left
            for (part, value, color) in [("done", group.1.done, Self.colors.done), ("failed", group.1.failed, Self.colors.failed),
                                         ("incomplete", group.1.incomplete, Self.colors.incomplete),
                                         ("pending", group.1.pending, Self.colors.pending)] where value > 0 {
                let w = barWidth * Double(value) / Double(most)
                out += "<rect class=\"bar-\(part)\" x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"16\" fill=\"\(color)\">"
                    + "<title>\(value)</title></rect>\n"
                x += w
            }
            out += label(x + 5, y + 13, [group.1.done, group.1.failed, group.1.incomplete, group.1.pending].map(String.init).joined(separator: " / "))
        }
        out += legend([(text(.fleetColumnDone), Self.colors.done), (text(.fleetColumnFailed), Self.colors.failed),
                       (text(.fleetColumnIncomplete), Self.colors.incomplete), (text(.fleetColumnPending), Self.colors.pending)],
                      x: left, y: height - 18)
        return out + "</svg>\n"
    }

    /// One bar per name.
    func bars(_ name: String, _ items: [(String, Double, String)]) -> String {
        guard !items.isEmpty else { return empty(name) }
        let (left, barWidth, row) = (140.0, 420.0, 22.0)
        let most = max(items.map(\.1).max() ?? 1, 1)
        var out = svgOpen(name, width: 640, height: Int(Double(items.count) * row + 20), label: name)
        for (index, item) in items.enumerated() {
            let y = 10 + Double(index) * row
            let w = barWidth * item.1 / most
            out += label(left - 6, y + 13, item.0, anchor: "end")
            out += "<rect class=\"bar\" x=\"\(f(left))\" y=\"\(f(y))\" width=\"\(f(w))\" height=\"16\" fill=\"\(Self.colors.line)\"/>\n"
            out += label(left + w + 5, y + 13, item.2)
        }
        return out + "</svg>\n"
    }

    /// Per station, the median read rate as a bar and the lowest to highest as a whisker.
    func readRatesChart(_ rates: [FleetStatusView.ReadRates]) -> String {
        guard !rates.isEmpty else { return empty("read-rates") }
        let (left, barWidth, row) = (140.0, 400.0, 22.0)
        let height = Double(rates.count) * row + 40
        let most = max(rates.map(\.maximum).max() ?? 1, 1)
        func x(_ value: Double) -> Double { left + barWidth * value / most }
        var out = svgOpen("read-rates", width: 640, height: Int(height), label: text(.reportReadRates))
        for (index, station) in rates.enumerated() {
            let y = 10 + Double(index) * row
            out += label(left - 6, y + 13, FleetStatusText(localizer: localizer).station(station.station), anchor: "end")
            out += "<rect class=\"bar-median\" x=\"\(f(left))\" y=\"\(f(y))\" width=\"\(f(x(station.median) - left))\" height=\"16\" "
                + "fill=\"\(Self.colors.line)\"/>\n"
            out += line("range", x(station.minimum), y + 8, x(station.maximum), y + 8, stroke: "#222", extra: "stroke-width=\"2\"")
            out += label(x(station.maximum) + 5, y + 13, decimal(station.median))
        }
        out += label(left, height - 12, "0") + label(left + barWidth, height - 12, decimal(most) + " " + text(.reportReadsPerSecond), anchor: "end")
        return out + "</svg>\n"
    }

    func line(_ name: String, _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, extra: String) -> String {
        "<line class=\"\(name)\" x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\" \(extra)/>\n"
    }

    func axes(width: Double, height: Double, left: Double, right: Double, top: Double, bottom: Double) -> String {
        "<path class=\"axes\" d=\"M\(f(left)) \(f(top)) V\(f(height - bottom)) H\(f(width - right))\" fill=\"none\" stroke=\"#555\"/>\n"
    }

    func legend(_ items: [(String, String)], x: Double, y: Double) -> String {
        var out = ""
        var at = x
        for (name, color) in items {
            out += "<rect class=\"legend\" x=\"\(f(at))\" y=\"\(f(y))\" width=\"10\" height=\"10\" fill=\"\(color)\"/>\n"
            out += label(at + 14, y + 9, name)
            at += 24 + Self.textWidth(name)
        }
        return out
    }
}

extension OutputError {
    /// A file ``CheckedFile`` could not write, as output that was lost.
    init(_ failure: CheckedFile.Failure) { self.init(path: failure.path, errno: failure.errno) }
}
