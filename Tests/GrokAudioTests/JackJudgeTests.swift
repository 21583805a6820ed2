@testable import GrokAudio
import Testing

/// Plugged in as the vendor judged it (issue 22, item 7): only a plug with a microphone is a
/// reader; a card that reports no headphone or microphone jack needs a handshake to tell.
@Suite("Jack detection")
struct JackJudgeTests {
    @Test("headphone and microphone jacks both plugged: a Grokker can be there")
    func bothPlugged() {
        #expect(ALSACard.judge([("Headphone Jack", true), ("Mic Jack", true)]) == true)
    }

    @Test("headphones without a microphone are no reader (the vendor's HEADSET_PLUG with microphone 0)")
    func headphonesWithoutMicrophone() {
        #expect(ALSACard.judge([("Headphone Jack", true), ("Mic Jack", false)]) == false)
        #expect(ALSACard.judge([("Headphone Jack", false), ("Headset Mic Jack", true)]) == false)
    }

    @Test("an HDMI or speaker jack that reports a plug is not a Grokker's: with no headphone or microphone jack the card cannot tell")
    func otherJacksDoNotCount() {
        #expect(ALSACard.judge([("HDMI/DP,pcm=3 Jack", true), ("Speaker Phantom Jack", true)]) == nil)
        #expect(ALSACard.judge([("HDMI/DP,pcm=3 Jack", true), ("Headphone Jack", false)]) == false)
    }

    @Test("a card that reports only one kind of jack is judged by it; a card with none (most USB dongles) is unknown, not plugged")
    func oneKindOrNone() {
        #expect(ALSACard.judge([("Mic Jack", true)]) == true)
        #expect(ALSACard.judge([("Line Out Jack", false)]) == false)
        #expect(ALSACard.judge([]) == nil)
    }
}
