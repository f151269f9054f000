use super::*;
use serde_json::json;

fn invoice(kind: &str, names: &[&str]) -> InvoiceAnswer {
    let lines: Vec<_> = names
        .iter()
        .map(|name| {
            json!({"transactionId": "t1", "skuId": null, "name": name, "quantity": 2, "vatRate": 20,
                   "unitPriceCents": 1450, "netWithVatCents": 2900, "vatCents": 483, "grossCents": 2417,
                   "allowanceCents": 0, "netCents": 2417})
        })
        .collect();
    let party = |name: &str| {
        json!({"name": name, "siren": "732829320", "vatNumber": "FR44732829320",
               "address": {"line1": "12 rue des Archives", "line2": null, "postalCode": "75004",
                           "city": "Paris", "country": "FR"}})
    };
    serde_json::from_value(json!({
        "invoiceId": "inv-1", "number": "F-s1-2026-000001", "kind": kind, "storeId": "s1",
        "issuedOn": "2026-11-24", "issuedAt": "2026-11-24T10:00:00Z", "currency": "EUR",
        "credits": if kind == "credit" {
            json!({"invoiceId": "inv-0", "number": "F-s1-2026-000000", "issuedOn": "2026-11-20"})
        } else { json!(null) },
        "seller": party("Till Épicerie SAS"), "buyer": party("Boulangerie Martin SARL"),
        "tickets": [{"transactionId": "t1", "number": "T-1", "registerId": "r1", "soldOn": "2026-11-24"}],
        "lines": lines,
        "vat": [{"vatRate": 20, "category": "S", "taxableCents": 2417, "vatCents": 483}],
        "totals": {"withoutVatCents": 2417, "vatCents": 483, "withVatCents": 2900, "paidCents": 2900, "dueCents": 0},
        "paymentTerms": "Facture acquittée : payée en caisse le 24/11/2026.",
        "notes": ["Tickets de caisse : T-1 du 24/11/2026."],
        "fiscal": {"registerId": "r1", "chain": "event", "seq": 3, "xmlSha256": "00"}
    }))
    .unwrap()
}

const XML: &[u8] = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rsm:CrossIndustryInvoice/>";

fn find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// The PDF as a reader sees it: its catalog's associated file and its XMP packet.
struct Read {
    document: lopdf::Document,
    xmp: String,
}

fn read(pdf: &[u8]) -> Read {
    let document = lopdf::Document::load_mem(pdf).expect("a PDF that reads");
    let catalog = document.catalog().unwrap();
    let metadata = catalog.get(b"Metadata").unwrap().as_reference().unwrap();
    let xmp = document.get_object(metadata).unwrap().as_stream().unwrap();
    let xmp = String::from_utf8(xmp.get_plain_content().unwrap()).unwrap();
    Read { document, xmp }
}

impl Read {
    fn dictionary<'a>(&'a self, object: &'a lopdf::Object) -> &'a lopdf::Dictionary {
        match object {
            lopdf::Object::Reference(id) => self.document.get_dictionary(*id).unwrap(),
            other => other.as_dict().unwrap(),
        }
    }
}

#[test]
fn the_pdf_is_pdf_a_3b_and_carries_the_xml_byte_for_byte() {
    let pdf = render(&invoice("invoice", &["Mug"]), XML).unwrap();
    assert!(pdf.starts_with(b"%PDF-1.7"), "{:?}", &pdf[..16]);
    let read = read(&pdf);
    let catalog = read.document.catalog().unwrap();
    let associated = catalog.get(b"AF").unwrap().as_array().unwrap();
    assert_eq!(associated.len(), 1, "one associated file");
    let spec = read.dictionary(&associated[0]);
    assert_eq!(spec.get(b"AFRelationship").unwrap().as_name().unwrap(), b"Alternative");
    assert_eq!(spec.get(b"F").unwrap().as_str().unwrap(), b"factur-x.xml");
    let embedded = read.dictionary(spec.get(b"EF").unwrap()).get(b"F").unwrap();
    let embedded = read.document.get_object(embedded.as_reference().unwrap()).unwrap();
    let embedded = embedded.as_stream().unwrap();
    assert_eq!(embedded.dict.get(b"Subtype").unwrap().as_name().unwrap(), b"text/xml");
    assert_eq!(embedded.get_plain_content().unwrap(), XML, "the XML is embedded as is");
    assert!(read.xmp.contains("<pdfaid:part>3</pdfaid:part>"), "{}", read.xmp);
    assert!(read.xmp.contains("<pdfaid:conformance>B</pdfaid:conformance>"));
    assert!(find(&pdf, b"/FontFile2"), "the font is embedded");
}

/// Factur-X's properties are in the XMP, with the PDF/A extension schema declaring each of them.
#[test]
fn the_xmp_says_what_factur_x_carries_and_declares_its_schema() {
    let pdf = render(&invoice("invoice", &["Mug"]), XML).unwrap();
    let xmp = read(&pdf).xmp;
    for property in [
        "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
        "<fx:DocumentType>INVOICE</fx:DocumentType>",
        "<fx:Version>1.0</fx:Version>",
        "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
    ] {
        assert!(xmp.contains(property), "{property} in {xmp}");
    }
    let namespace = format!(
        "<pdfaSchema:namespaceURI>{}</pdfaSchema:namespaceURI>",
        factur_x::NAMESPACE
    );
    assert!(xmp.contains(&namespace), "{xmp}");
    for name in ["DocumentFileName", "DocumentType", "Version", "ConformanceLevel"] {
        assert!(
            xmp.contains(&format!("<pdfaProperty:name>{name}</pdfaProperty:name>")),
            "{name}"
        );
    }
    assert!(
        xmp.find("</rdf:RDF>").unwrap() > xmp.find("xmlns:fx=").unwrap(),
        "inside the packet's RDF"
    );
    assert!(xmp.contains("<?xpacket end="), "the packet still ends as a packet");
}

#[test]
fn every_copy_of_an_invoice_is_the_same_file() {
    let a = render(&invoice("invoice", &["Mug"]), XML).unwrap();
    let b = render(&invoice("invoice", &["Mug"]), XML).unwrap();
    assert_eq!(a, b);
    let credit = render(&invoice("credit", &["Mug"]), XML).unwrap();
    assert_ne!(a, credit);
}

#[test]
fn a_credit_invoice_says_so_and_cites_the_invoice() {
    let text: Vec<String> = lines(&invoice("credit", &["Mug"]))
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(text[0].starts_with("FACTURE D'AVOIR"), "{text:?}");
    assert!(
        text.iter()
            .any(|l| l == "Avoir sur la facture F-s1-2026-000000 du 20/11/2026")
    );
    assert!(text.iter().any(|l| l.contains("Remboursé en caisse")));
}

#[test]
fn the_pages_hold_the_parties_lines_vat_and_totals_and_long_invoices_go_on() {
    let names: Vec<String> = (0..150)
        .map(|i| format!("Article {i} au nom assez long pour tenir sur deux lignes du tableau"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let answer = invoice("invoice", &names);
    let text: Vec<String> = lines(&answer).into_iter().map(|l| l.text).collect();
    assert!(
        text.iter().all(|l| l.chars().count() <= COLUMNS),
        "a line wider than the page"
    );
    for expected in [
        "SIREN 732829320",
        "TVA intracommunautaire FR44732829320",
        "T-1 du 24/11/2026",
        "Total TTC",
    ] {
        assert!(text.iter().any(|l| l.contains(expected)), "{expected} missing");
    }
    assert!(
        text.iter()
            .any(|l| l.starts_with("20 %") && l.contains("24,17") && l.contains("4,83"))
    );
    let pdf = render(&answer, XML).unwrap();
    let at = pdf.windows(7).position(|w| w == b"/Count ").expect("a page tree");
    let count: String = pdf[at + 7..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .map(|b| char::from(*b))
        .collect();
    assert!(count.parse::<usize>().unwrap() > 1, "several pages: {count}");
}

#[test]
fn amounts_are_written_the_french_way() {
    assert_eq!(euros(0), "0,00");
    assert_eq!(euros(5), "0,05");
    assert_eq!(euros(123_456_789), "1\u{202f}234\u{202f}567,89");
    assert_eq!(euros(-1450), "-14,50");
    assert_eq!(wrap("", 10), vec![String::new()]);
    assert_eq!(wrap("aaaaaaaaaaaa b", 5), vec!["aaaaa", "aaaaa", "aa b"]);
}
