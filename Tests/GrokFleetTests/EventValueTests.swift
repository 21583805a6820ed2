import Foundation
import GrokFleet
import Testing

@Suite("Event values: typed JSON under stable keys")
struct EventValueTests {
    @Test("a FleetEvent's data encodes integers, numbers, booleans and strings as native JSON values, and decodes back")
    func nativeJSON() throws {
        let event = FleetEvent(event: "x", device: "sim:0", serial: nil, time: Date(timeIntervalSince1970: 0),
                               data: ["done": 4096, "granted": true, "duration_s": .seconds(1.2344), "step": "firmware",
                                      "threshold": 0.3, "code": "4096"])
        let line = event.jsonLine()
        #expect(line.contains(#""data":{"code":"4096","done":4096,"duration_s":1.234,"granted":true,"step":"firmware","threshold":0.3}"#),
                "\(line)")
        let back = try JSONDecoder().decode(FleetEvent.self, from: Data(line.utf8))
        #expect(back == event)
        #expect(back.data["done"]?.integer == 4096 && back.data["done"]?.number == 4096 && back.data["done"]?.string == nil)
        #expect(back.data["granted"]?.bool == true && back.data["granted"]?.integer == nil)
        #expect(back.data["code"]?.string == "4096" && back.data["code"]?.integer == nil)
    }

    @Test("seconds are kept to the millisecond, and a number that is not finite still makes a line")
    func seconds() {
        #expect(EventValue.seconds(2.0004) == .number(2.0))
        #expect(EventValue.seconds(.infinity) == .number(0))
        let event = FleetEvent(event: "x", device: "sim:0", serial: nil, time: Date(), data: ["v": .number(.nan)])
        #expect(event.jsonLine().contains(#""v":0"#))
    }
}
