// lead: the bodies of `info`, `audio decode` and `emulate`. Each placeholder below is to be
// replaced by the real function in its own file; delete it here when you add that file.
// The signatures are what the command files call.

// lead: replace with the body of `grokctl audio decode` (decode `command.file`).
func runAudioDecode(_ command: AudioDecodeCommand, _ context: CommandContext) throws -> ExitCode {
    throw CLIError.notYetAvailable(feature: "grokctl audio decode")
}

// lead: replace with the body of `grokctl emulate` (serve one Grokker on the two paths).
func runEmulate(_ command: EmulateCommand, _ context: CommandContext) throws -> ExitCode {
    throw CLIError.notYetAvailable(feature: "grokctl emulate")
}
