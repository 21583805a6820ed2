import GrokLink
import Testing

@Suite("Vendor modem settings")
struct VendorModemSettingTests {
    /// The reference's table at 44.1 kHz: spb, answer Hz, "1" Hz, "0" Hz, bit/s.
    static let reference: [(Int, Double, Double, Double, Double)] = [
        (8, 2205, 11025, 2756, 5512), (10, 2004.5, 11025, 4410, 4410), (12, 2450, 11025, 5512.5, 3675),
        (16, 1837.5, 11025, 5512.5, 2756), (20, 1575, 11025, 5512.5, 2205), (24, 1378, 11025, 5512.5, 1838),
        (36, 1160.5, 5512.5, 2450, 1225), (48, 760, 2756, 1378, 919), (72, 580, 1837.5, 918.75, 612),
    ]

    @Test("every setting at 44.1 kHz has the reference's tones and bit rate, within the vendor's whole-Hz truncation",
          arguments: 0..<9)
    func referenceTable(row: Int) throws {
        let (spb, answer, one, zero, rate) = Self.reference[row]
        let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: 44_100)
        #expect(abs(s.answerTone.hz - answer) < 1.0)
        #expect(abs(s.oneTone.hz - one) < 1.0)
        #expect(abs(s.zeroTone.hz - zero) < 1.0)
        #expect(abs(s.bitsPerSecond - rate) < 1.0)
    }

    @Test("a 1 bit has b sign changes and a 0 bit c, as the library's rows say")
    func signChangesPerBit() throws {
        for rate in VendorModemSetting.supportedSampleRates {
            for s in VendorModemSetting.all(sampleRate: rate) {
                #expect(abs(s.oneTone.hz * 2 * Double(s.samplesPerBit) / Double(rate) - Double(s.signChangesPerOne)) < 0.01)
                #expect(abs(s.zeroTone.hz * 2 * Double(s.samplesPerBit) / Double(rate) - Double(s.signChangesPerZero)) < 0.01)
            }
        }
    }

    @Test("the vendor's rows {spb, a, b, c} are the library's, in its order")
    func rows() throws {
        let expected: [(Int, Int, Int, Int)] = [
            (12, 9, 6, 3), (8, 10, 4, 1), (10, 11, 5, 2), (16, 12, 8, 4), (20, 14, 10, 5),
            (24, 16, 12, 6), (36, 19, 9, 4), (48, 29, 6, 3), (72, 38, 6, 3),
        ]
        for (spb, a, b, c) in expected {
            let s = try VendorModemSetting(samplesPerBit: spb, sampleRate: 44_100)
            #expect(s.answerDivisor == a && s.signChangesPerOne == b && s.signChangesPerZero == c)
        }
    }

    @Test("at 48 kHz the same rows give tones scaled by the rate: 12 spb answers 2666 Hz, sends 12 kHz and 6 kHz")
    func at48k() throws {
        let s = try VendorModemSetting(samplesPerBit: 12, sampleRate: 48_000)
        #expect(s.answerTone.nominalHz == 2666)
        #expect(s.oneTone.nominalHz == 12_000)
        #expect(s.zeroTone.nominalHz == 6000)
        #expect(s.bitsPerSecond == 4000)
        let answers = VendorModemSetting.all(sampleRate: 48_000).map(\.answerTone.nominalHz)
        #expect(answers == [2400, 2181, 2666, 2000, 1714, 1500, 1263, 827, 631])
    }

    @Test("the vendor truncates to whole Hz: the 12 spb idle tone is 5512 Hz, not 5512.5")
    func truncation() throws {
        let s = try VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100)
        #expect(s.zeroTone.nominalHz == 5512)
        #expect(s.zeroTone.phaseIncrement == UInt32((UInt64(5512) << 25) / 44_100))
        #expect(try VendorModemSetting(samplesPerBit: 10, sampleRate: 44_100).answerTone.nominalHz == 2004)
    }

    @Test("the handshake's window counts: 315 idle sign changes at 12 spb, carrier lost below 313, request 180 at 44.1 kHz and 165 at 48 kHz")
    func windowCounts() throws {
        let s = try VendorModemSetting(samplesPerBit: 12, sampleRate: 44_100)
        #expect(s.idleSignChangesPerWindow == 315)
        #expect(s.carrierSignChangeThreshold == 313)
        #expect(s.bitSignChangeThreshold == 5)
        #expect(VendorHandshakeTones.expectedSignChanges(hz: 3150, sampleRate: 44_100) == 180)
        #expect(VendorHandshakeTones.expectedSignChanges(hz: 3150, sampleRate: 48_000) == 165)
        #expect(VendorHandshakeTones.expectedSignChanges(hz: 2666.66, sampleRate: 48_000) == 139)
        #expect(VendorHandshakeTones.expectedSignChanges(hz: 3675, sampleRate: 44_100) == 210)
        #expect(VendorHandshakeTones.rateAnnouncement(sampleRate: 48_000).phaseIncrement == 669_690)
        #expect(abs(VendorHandshakeTones.rateAnnouncement(sampleRate: 48_000).hz - 958) < 0.01)
        #expect(abs(VendorHandshakeTones.nonSymmetricAnnouncement(sampleRate: 44_100).hz - 400) < 0.01)
    }

    @Test("settings outside the vendor's nine, or rates other than 44.1 and 48 kHz, are refused with a stable code")
    func refused() {
        #expect(throws: VendorModemError.unsupportedSetting(samplesPerBit: 14, sampleRate: 44_100)) {
            try VendorModemSetting(samplesPerBit: 14, sampleRate: 44_100)
        }
        #expect(throws: VendorModemError.unsupportedSetting(samplesPerBit: 12, sampleRate: 22_050)) {
            try VendorModemSetting(samplesPerBit: 12, sampleRate: 22_050)
        }
        #expect(VendorModemError.unsupportedSetting(samplesPerBit: 14, sampleRate: 44_100).code == "vendor_modem_unsupported_setting")
        #expect(VendorModemError.unsupportedSetting(samplesPerBit: 14, sampleRate: 44_100).arguments == ["14", "44100"])
    }
}
