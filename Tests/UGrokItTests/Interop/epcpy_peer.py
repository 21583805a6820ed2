"""The independent peer for EpcPeerTests: epcpy (GS1 EPC Tag Data Standard, PyPI) decodes
our EPCs and encodes our tag URIs.

Reads lines "<tag URI>\t<hex EPC>" on standard input and writes, for each, one line
"<pure identity URI epcpy decodes from the hex>\t<hex epcpy encodes from the tag URI>"
(either side "ERROR: <message>" when epcpy refuses it).
"""
import sys

import epcpy
from epcpy.utils.parsers import tag_uri_to_tag_encodable


def decode(hex_epc):
    try:
        return epcpy.hex_to_tag_encodable(hex_epc).epc_uri
    except Exception as error:  # epcpy raises several kinds; report any as a refusal.
        return f"ERROR: {type(error).__name__}: {error}"


def encode(tag_uri):
    try:
        scheme, rest = tag_uri.split(":")[3], tag_uri.split(":", 4)[4]
        tag = tag_uri_to_tag_encodable(tag_uri)
        cls = type(tag)
        arguments = {"binary_coding_scheme": cls.BinaryCodingScheme(scheme)}
        filter_enum = getattr(sys.modules[cls.__module__], cls.__name__ + "FilterValue", None)
        if filter_enum is not None:
            arguments["filter_value"] = filter_enum(rest.split(".")[0])
        return tag.hex(**arguments)
    except Exception as error:
        return f"ERROR: {type(error).__name__}: {error}"


for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    tag_uri, hex_epc = line.split("\t")
    print(f"{decode(hex_epc)}\t{encode(tag_uri)}")
