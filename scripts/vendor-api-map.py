#!/usr/bin/env python3
"""Maps the vendor SDK's public API, item by item, onto UGrokIt (docs/vendor-api.md).

  scripts/vendor-api-map.py --headers DIR      every item of the vendor's iOS headers in DIR has
                                               a row in docs/vendor-api.md (and no row is stale)
  scripts/vendor-api-map.py --typecheck BUILD  every row's Swift reference compiles against the
                                               modules built in BUILD (e.g. .build/release), and
                                               so does every README snippet that starts with
                                               `import UGrokIt` (with nothing else imported)

Both together print one JSON summary and exit 1 when an item is missing. The headers are the
vendor's (src/ios/include in its public repository, docs/vendor-protocol.md says where); they
are read, never copied here. The map is ours: the vendor's names are facts, the Swift
references are expressions that must type-check with `import UGrokIt` (and GrokFleet for the
configuration delegate, which is housekeeping and lives there by design).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP = os.path.join(ROOT, "docs", "vendor-api.md")
# Headers left out, and why: user interface (UIKit views and alerts) and the vendor's own
# JSON serialisation helpers for its Cordova bridge (Codable does this in Swift).
LEFT_OUT = {"UgiDefaultConfigurationUi.h": "UI", "UgiUiUtil.h": "UI", "UgiJson.h": "serialisation helper"}
# Items of the 1.15 SDK (newer than the 1.7 headers in the public repository), as the
# issue's reading of the 1.15 headers lists them.
LATER = {
    "UgiOngoingOperations", "Ugi.localizedRegionNameForName:", "Ugi.getBatteryInfoWithCompletion:",
    "UgiSingleFindRampPowerMode", "UgiSingleFindRampPowerMode.NO_RAMP", "UgiSingleFindRampPowerMode.SLOW",
    "UgiSingleFindRampPowerMode.MEDIUM", "UgiSingleFindRampPowerMode.FAST",
}
STATUSES = {"same", "differs", "n/a"}
STATEMENT = re.compile(
    r"@interface\s+(\w+)\s*(\([^)]*\))?"
    r"|@protocol\s+(\w+)\s*(?:<[^>]*>)?\s*\n"
    r"|@end"
    r"|typedef\s+(enum|struct)\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;"
    r"|@property\s*(?:\([^)]*\))?\s*[^;]*?(\w+)\s*;"
    r"|^\s*[-+]\s*\([^;{]*?\)\s*(\w+)([^;{]*);"
    r"|#define\s+(\w+)",
    re.S | re.M)


def header_items(path):
    """The public items one header declares, named `Class.member`, `Type`, `CONSTANT`."""
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    items, owner = [], None
    for m in STATEMENT.finditer(text):
        if m.group(1):
            owner = m.group(1)
            if not m.group(2):  # a category adds to its class
                items.append(owner)
        elif m.group(3):
            owner = m.group(3)
            items.append(owner)
        elif m.group(0) == "@end":
            owner = None
        elif m.group(4):
            name, body = m.group(6), m.group(5)
            items.append(name)
            if m.group(4) == "struct":
                items += [f"{name}.{f}" for f in re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*;", body)]
            else:
                items += re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", body.strip())
        elif m.group(7):
            items.append(f"{owner}.{m.group(7)}")
        elif m.group(8):
            first, rest = m.group(8), m.group(9)
            labels = re.findall(r"(\w+)\s*:", first + rest) if ":" in rest else []
            items.append(f"{owner}." + ("".join(l + ":" for l in labels) if labels else first))
        elif m.group(10) and not m.group(10).startswith("__"):
            items.append(m.group(10))
    return items


def read_map():
    rows = []
    for number, line in enumerate(open(MAP, encoding="utf-8"), 1):
        if not line.startswith("| `") and not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("vendor", "---") or cells[0].startswith("-"):
            continue
        item, status, ref, note = (c.strip("`") if i < 3 else c for i, c in enumerate(cells))
        if status not in STATUSES:
            sys.exit(f"{MAP}:{number}: status '{status}' is not one of {sorted(STATUSES)}")
        if status == "n/a" and not note:
            sys.exit(f"{MAP}:{number}: '{item}' is n/a without a reason")
        if status != "n/a" and not ref:
            sys.exit(f"{MAP}:{number}: '{item}' has no Swift reference")
        rows.append({"item": item, "status": status, "ref": ref, "note": note, "line": number})
    return rows


def swiftc_typecheck(build, name, text):
    """Type-checks one Swift file against the modules in BUILD; returns (status, stderr)."""
    modules = os.path.join(build, "Modules")
    if not os.path.isdir(modules):
        sys.exit(f"{modules}: no built modules here; build first (swift build -c release ...)")
    includes = []
    package = open(os.path.join(ROOT, "Package.swift"), encoding="utf-8").read()
    for library, pkg in re.findall(r'\.systemLibrary\(name: "(\w+)", pkgConfig: "([\w.+-]+)"', package):
        includes += ["-I", os.path.join(ROOT, "Sources", library)]
        flags = subprocess.run(["pkg-config", "--cflags", pkg], capture_output=True, text=True).stdout.split()
        includes += [x for flag in flags for x in ("-Xcc", flag)]
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, name)
        open(source, "w").write(text)
        done = subprocess.run(["swiftc", "-typecheck", "-I", modules, *includes, source], capture_output=True, text=True)
    return done.returncode, done.stderr


def readme_snippets():
    """The README's Swift blocks that an app would write: `import UGrokIt` and nothing else."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```swift\n(.*?)```", text, re.S)
    return [b for b in blocks if b.startswith("import UGrokIt\n") and b.count("import ") == 1]


def typecheck(rows, build):
    """Type-checks every reference and README snippet; returns {item: first error}."""
    lines = ["import Foundation", "import UGrokIt", "import GrokFleet", "",
             "@MainActor func vendorAPIReferences() {"]
    where = {}
    for row in rows:
        if row["status"] == "n/a":
            continue
        where[len(lines) + 1] = row["item"]
        lines.append(f"    _ = ({row['ref']})")
    lines.append("}")
    status, stderr = swiftc_typecheck(build, "VendorAPIReferences.swift", "\n".join(lines) + "\n")
    errors = {}
    for m in re.finditer(r"VendorAPIReferences\.swift:(\d+):\d+: error: ([^\n]*)", stderr):
        item = where.get(int(m.group(1)))
        if item:
            errors.setdefault(item, m.group(2))
    if status != 0 and not errors:
        sys.exit("swiftc failed outside the references:\n" + stderr[-4000:])
    snippets = readme_snippets()
    if not snippets:
        sys.exit("README.md: no Swift snippet starting with `import UGrokIt` to check")
    for number, snippet in enumerate(snippets, 1):
        status, stderr = swiftc_typecheck(build, "main.swift", snippet)
        if status != 0:
            first = re.search(r"main\.swift:(\d+):\d+: error: ([^\n]*)", stderr)
            errors[f"README.md Swift snippet {number}"] = (f"line {first.group(1)}: {first.group(2)}" if first
                                                            else stderr[-400:])
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--headers", help="the vendor's iOS include directory")
    parser.add_argument("--typecheck", metavar="BUILD", help="a build directory with Modules/")
    args = parser.parse_args()
    if not args.headers and not args.typecheck:
        parser.error("give --headers DIR, --typecheck BUILD or both")
    rows = read_map()
    by_item = {}
    for row in rows:
        if row["item"] in by_item:
            sys.exit(f"{MAP}:{row['line']}: '{row['item']}' is mapped twice")
        by_item[row["item"]] = row
    missing, stale, errors, vendor = [], [], {}, None
    if args.headers:
        vendor = []
        for name in sorted(os.listdir(args.headers)):
            if name.endswith(".h") and name not in LEFT_OUT:
                vendor += header_items(os.path.join(args.headers, name))
        if len(vendor) < 300:
            sys.exit(f"{args.headers}: only {len(vendor)} items found; is this the vendor's include directory?")
        vendor = list(dict.fromkeys(vendor)) + sorted(LATER)
        missing = [item for item in vendor if item not in by_item]
        stale = [row["item"] for row in rows if row["item"] not in vendor]
    if args.typecheck:
        errors = typecheck(rows, args.typecheck)
    counts = {s: sum(1 for r in rows if r["status"] == s and r["item"] not in errors) for s in STATUSES}
    summary = {
        "items": len(vendor) if vendor is not None else len(rows),
        "same": counts["same"], "differs": counts["differs"], "not_applicable": counts["n/a"],
        "missing": len(missing) + len(errors),
        "missing_items": missing + [f"{item}: {error}" for item, error in sorted(errors.items())],
        "stale_rows": stale,
        "headers_checked": vendor is not None, "references_checked": bool(args.typecheck),
    }
    print(json.dumps(summary, indent=2))
    return 1 if missing or errors or stale else 0


if __name__ == "__main__":
    sys.exit(main())
