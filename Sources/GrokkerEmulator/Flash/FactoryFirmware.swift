import GrokBasics
import GrokAudio

/// What the factory programs into a new emulated Grokker's flash (``EmulatedGrokker``
/// manufactures `flash.bin` from these the first time its directory is opened), and the
/// versions of the images this emulated hardware knows without a version marker.
///
/// - The loader is the demo channel's, byte for byte: `firmware/demo/grokker-loader-1.0.0.hex`
///   (1024 bytes at 0x08007000, i.e. address 0x0000 of the unit's 16-bit space, as the demo
///   `.ugif` places its LOADER section); it carries `GROKVER:` 1.0.0. A test checks the two agree.
/// - The application is made here: ``applicationBytes`` bytes at ``applicationAddress``
///   (where the demo `.ugif` puts its READER section), the marker and the version the unit
///   is made with, then a pattern seeded by that version. The emulated unit never runs what
///   its flash holds; only the image's identity matters.
/// - ``catalogue``: the demo `.ugif`'s READER image (the first 61440 bytes of
///   `firmware/demo/grokker-app-1.8.0.hex`, real machine code without a marker) is 1.8.0.
public enum FactoryFirmware {
    /// Where the loader lives in the unit's address space.
    public static let loaderAddress: UInt16 = 0x0000
    /// Where the application lives (the demo `.ugif`'s READER address).
    public static let applicationAddress: UInt16 = 0x1000
    /// The size of a factory application image.
    public static let applicationBytes = 16_384
    /// The CRC-32/MPEG-2 of the demo `.ugif`'s READER image (61440 bytes).
    public static let demoApplicationCRC32: UInt32 = 0x7C74F564

    /// The versions of images without a `GROKVER:` marker, by CRC-32/MPEG-2.
    public static let catalogue: [UInt32: VendorLoader.Version] = [demoApplicationCRC32: .init(1, 8, 0)]

    /// The factory loader, 1.0.0 (the demo channel's loader image).
    public static let loader: [UInt8] = decodeHex(loaderHex.joined())

    /// A factory application image reporting `version`.
    public static func application(version: VendorLoader.Version) -> [UInt8] {
        var bytes = VendorLoader.versionMarker + [version.major, version.minor, version.build]
        bytes += Array(" emulated Grokker factory application; data, not code. ".utf8)
        var generator = SplitMix64(seed: 0x4641_4354 ^ UInt64(version.major) << 16 ^ UInt64(version.minor) << 8 ^ UInt64(version.build))
        while bytes.count < applicationBytes { bytes.append(UInt8(truncatingIfNeeded: generator.next() >> 56)) }
        return bytes
    }

    private static func decodeHex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for c in text.utf8 {
            let v: UInt8 = c <= 57 ? c - 48 : c - 55
            if let h = high { bytes.append(h << 4 | v); high = nil } else { high = v }
        }
        return bytes
    }

    /// `grokker-loader-1.0.0.hex`'s data bytes, in hex.
    private static let loaderHex: [String] = [
        "47524F4B5645523A01000020656D756C617465642047726F6B6B6572206C6F6164657220696D61676520666F72207468652064656D6F2063",
        "68616E6E656C3B20646174612C206E6F7420636F64652E20EFD46C681109CD744D749940571376A74E5E29EB6EC537BEC23EC6CEAC03EDA7",
        "646428F5B88E6A575CBEAE1C733F23280314791B5DDC2B74E66940215DDC0F96ACBE2156C6D92EC92EF7CD37E44A1359C3C1B26C79996294",
        "70DD5FEA97037EAE9191F973FC2C9A00868692020634BE7149C1B33C1FABA8C637BFFF732DEA8DF88EB313CA495FA008C7B28D481CCA1EC8",
        "8D853D2B4C8A1DBB931C0F939D71DEC174EBAD8317FFC5AB3264D473159B34E06BEA6FF26F15DA4EE1770CFBE2359B2CE65224BD296F3708",
        "43D9695F55927DE67CE8849F24E23B9F83E931705251FA119DAAFC55B86E56A264260DC79E744216AC007E80E44CE3CD4BC676578E4B31E8",
        "B11DE8D3F2F01C150061B07FB404F7D1703FED087B9A28958E96F3CF5D8C2980B98F45B1EEE164B86E44B5F3742CE7DBBB23FF1B4E831E0D",
        "C9290B6EBD5CE355341A5FD2CD1839EF463921D8F26CF5C38166B9397EEC5C8C34FB6CA6984322A295214FB3039643835E0E1D8D85947479",
        "DE857C8E6CD63C03912D2EFB3FB3C5BC06305CEA984FABDE0EE14B3FC0F102D51BB0FB247562B13837FB1F791BCE039547ED9764BCB50EF3",
        "3267FFD3ED29B50043E7433A631984A7A014BE170379FE26E15EAB052481AA761C4BCD5DF54817DB3C2CA3639ED3755686E99B634034FF01",
        "9317F1A555B655FCB41C991F86FC12C74B0D1BD32E34C0684DEB542C7D994757E53D68A28B1EA9F1EC391212C36C59AD420F615F410F5D12",
        "6B8AF6E4AA1380B1BBAE74EDB5587965291B726BFBBEC9ACCD3C909A55DC9A4C6EF74A1071FCA9B1145F1BF9CA29C742387942D7AF38DF8E",
        "00934DD2F428CAB17EB74E48CB39B881379301D1D3AA46F637263FD38BC88DE2AC0E7AF196C06002569446411F603EEA3B837B6C1BF7E33C",
        "24B7782205AA9CA5F4AF78BB629EEAF945C79ABD8E7002971D00CB672E02E688A3BD782CFE3B3D59413F80835E87898A16D73D6B2189CC9C",
        "8FB3F770B698EA784DC77B12FB218BA6DC66E41300D7B102895B696E0B3B8B2725DAB5E3D0D93DB5D1559E2B886F6F007138A86933376634",
        "BAA123BA818F7717B7B7658DF0FE2AD8419D8EF4C9F0B1150F9886CF83A6BE72B429683A6E881E3BA16C7C135ADE3B3628273EAC7E570C7F",
        "7A784AFA77DAD71978F3C6ACCF7FE311FB847309E559C6CC2D54124D5A019AD94D944BFB15D4993EDFE0BCDC869A1137C340EA94EAC2C527",
        "C723371538A13B16BD25F2381577F44C04A1845648A782FBE27FC169284698B2B80007936F766500E9D548037BE6E07A4B4295998A98A816",
        "0B1F9CD9F78735B221CFCCE67D9F4FCC",
    ]
}
