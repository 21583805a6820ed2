import GrokBasics

/// An EPC URI or GS1 part that cannot be encoded (``EpcTag``). Each case names the scheme
/// (`sgtin-96`), the field by its code (`serial`; the catalog's `epc.field.<code>`), the
/// value as given and what the field allows.
public enum EpcEncodingError: CodedError, Sendable, Equatable {
    /// Not `urn:epc:tag:...` or `urn:epc:id:...`.
    case notEpcURI(uri: String)
    /// The URI names a scheme or identity the Tag Data Standard does not have; `known` lists them.
    case unknownScheme(uri: String, scheme: String, known: String)
    /// The wrong number of dot-separated fields; `format` is the fields the scheme takes.
    case fieldCount(uri: String, scheme: String, expected: Int, found: Int, format: String)
    /// A filter value outside `0...maximum`.
    case filterOutOfRange(scheme: String, filter: String, maximum: Int)
    /// A filter given beside a tag URI that carries a different one.
    case filterConflict(uri: String, filter: String)
    /// A `%` not followed by two hex digits of a printable character.
    case badEscape(scheme: String, field: String, value: String)
    /// A company prefix that is not 6 to 12 digits.
    case companyPrefixLength(scheme: String, value: String, digits: Int)
    /// A field that must have exactly `expected` digits (the company prefix's length decides
    /// how many, `companyDigits`; 0 when it does not).
    case digitCount(scheme: String, field: String, value: String, expected: Int, companyDigits: Int)
    /// A required field left empty.
    case empty(scheme: String, field: String)
    /// A field of digits with something else in it.
    case notDigits(scheme: String, field: String, value: String)
    /// A number written with a leading zero, which its field cannot keep.
    case leadingZero(scheme: String, field: String, value: String)
    /// A number above what its field holds.
    case tooLarge(scheme: String, field: String, value: String, maximum: String)
    /// A text longer than its field holds.
    case tooLong(scheme: String, field: String, value: String, maximum: Int)
    /// A character the field cannot encode; `allowed` lists what it can.
    case badCharacter(scheme: String, field: String, value: String, character: String, allowed: String)
    /// A CAGE code or DoDAAC that is not 5 or 6 characters.
    case cageLength(scheme: String, value: String, characters: Int)
    /// A variable-length EPC longer than a tag's EPC the SDK accepts.
    case tooManyBits(scheme: String, bits: Int, maximum: Int)

    public var code: String {
        switch self {
        case .notEpcURI: "epc_uri_not_epc"
        case .unknownScheme: "epc_uri_unknown_scheme"
        case .fieldCount: "epc_uri_field_count"
        case .filterOutOfRange: "epc_filter_out_of_range"
        case .filterConflict: "epc_filter_conflict"
        case .badEscape: "epc_field_bad_escape"
        case .companyPrefixLength: "epc_company_prefix_length"
        case .digitCount: "epc_field_digit_count"
        case .empty: "epc_field_empty"
        case .notDigits: "epc_field_not_digits"
        case .leadingZero: "epc_field_leading_zero"
        case .tooLarge: "epc_field_too_large"
        case .tooLong: "epc_field_too_long"
        case .badCharacter: "epc_field_character"
        case .cageLength: "epc_cage_length"
        case .tooManyBits: "epc_too_many_bits"
        }
    }

    public var arguments: [String] {
        switch self {
        case .notEpcURI(let uri): [uri]
        case .unknownScheme(let uri, let scheme, let known): [uri, scheme, known]
        case .fieldCount(let uri, let scheme, let expected, let found, let format):
            [uri, scheme, String(expected), String(found), format]
        case .filterOutOfRange(let scheme, let filter, let maximum): [scheme, filter, String(maximum)]
        case .filterConflict(let uri, let filter): [uri, filter]
        case .badEscape(let scheme, let field, let value), .notDigits(let scheme, let field, let value),
             .leadingZero(let scheme, let field, let value):
            [scheme, field, value]
        case .companyPrefixLength(let scheme, let value, let digits): [scheme, value, String(digits)]
        case .digitCount(let scheme, let field, let value, let expected, let companyDigits):
            [scheme, field, value, String(expected), companyDigits == 0 ? "" : String(companyDigits)]
        case .empty(let scheme, let field): [scheme, field]
        case .tooLarge(let scheme, let field, let value, let maximum): [scheme, field, value, maximum]
        case .tooLong(let scheme, let field, let value, let maximum): [scheme, field, value, String(maximum)]
        case .badCharacter(let scheme, let field, let value, let character, let allowed):
            [scheme, field, value, character, allowed]
        case .cageLength(let scheme, let value, let characters): [scheme, value, String(characters)]
        case .tooManyBits(let scheme, let bits, let maximum): [scheme, String(bits), String(maximum)]
        }
    }

    public var description: String { englishMessage }
}
