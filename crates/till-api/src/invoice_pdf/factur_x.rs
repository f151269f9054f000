//! Factur-X's own XMP metadata: the properties saying what the PDF carries (its document type,
//! the embedded file's name, the standard's version and the profile), and the PDF/A extension
//! schema that declares them, as PDF/A asks of every property outside its predefined schemas.
//!
//! krilla writes the XMP packet itself and takes no extension, so the packet it wrote is read
//! back from the finished file, completed, and the file written again with lopdf; nothing else
//! in the document changes.

use super::{PdfError, XML_NAME};
use lopdf::{Document, Object};

/// Factur-X's XMP namespace.
pub const NAMESPACE: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

/// The profile every till invoice is written to.
const CONFORMANCE_LEVEL: &str = "EN 16931";

/// The four properties, each `(name, value, description)`, in the order the standard lists them.
const PROPERTIES: [(&str, &str, &str); 4] = [
    ("DocumentFileName", XML_NAME, "The name of the embedded XML document"),
    (
        "DocumentType",
        "INVOICE",
        "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER",
    ),
    (
        "Version",
        "1.0",
        "The actual version of the standard applying to the embedded XML document",
    ),
    (
        "ConformanceLevel",
        CONFORMANCE_LEVEL,
        "The conformance level of the embedded XML document",
    ),
];

/// `pdf` with Factur-X's properties and their extension schema added to its XMP metadata.
pub fn declare(pdf: &[u8]) -> Result<Vec<u8>, PdfError> {
    let unreadable = |what: &str| PdfError(format!("its XMP metadata: {what}"));
    let mut document = Document::load_mem(pdf).map_err(|_| unreadable("the PDF does not read"))?;
    let metadata = document
        .catalog()
        .and_then(|catalog| catalog.get(b"Metadata"))
        .and_then(Object::as_reference)
        .map_err(|_| unreadable("the catalog names none"))?;
    let stream = document
        .get_object_mut(metadata)
        .and_then(Object::as_stream_mut)
        .map_err(|_| unreadable("not a stream"))?;
    let packet = stream
        .get_plain_content()
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| unreadable("not UTF-8"))?;
    stream.set_plain_content(completed(&packet).ok_or_else(|| unreadable("no RDF"))?.into_bytes());
    let mut written = Vec::with_capacity(pdf.len() + 2048);
    document
        .save_to(&mut written)
        .map_err(|_| PdfError("it could not be written again".to_owned()))?;
    Ok(written)
}

/// The packet with Factur-X's descriptions before its RDF's end; `None` when it has no RDF.
fn completed(packet: &str) -> Option<String> {
    let end = packet.rfind("</rdf:RDF>")?;
    let mut out = String::with_capacity(packet.len() + 2048);
    out.push_str(&packet[..end]);
    out.push_str(&extension_schema());
    out.push_str(&properties());
    out.push_str(&packet[end..]);
    Some(out)
}

/// The PDF/A extension schema declaring Factur-X's properties.
fn extension_schema() -> String {
    let declared: String = PROPERTIES
        .iter()
        .map(|(name, _, description)| {
            format!(
                "<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>{name}</pdfaProperty:name>\
                 <pdfaProperty:valueType>Text</pdfaProperty:valueType>\
                 <pdfaProperty:category>external</pdfaProperty:category>\
                 <pdfaProperty:description>{description}</pdfaProperty:description></rdf:li>"
            )
        })
        .collect();
    format!(
        "<rdf:Description rdf:about=\"\" xmlns:pdfaExtension=\"http://www.aiim.org/pdfa/ns/extension/\" \
         xmlns:pdfaSchema=\"http://www.aiim.org/pdfa/ns/schema#\" \
         xmlns:pdfaProperty=\"http://www.aiim.org/pdfa/ns/property#\">\
         <pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType=\"Resource\">\
         <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>\
         <pdfaSchema:namespaceURI>{NAMESPACE}</pdfaSchema:namespaceURI>\
         <pdfaSchema:prefix>fx</pdfaSchema:prefix>\
         <pdfaSchema:property><rdf:Seq>{declared}</rdf:Seq></pdfaSchema:property>\
         </rdf:li></rdf:Bag></pdfaExtension:schemas></rdf:Description>"
    )
}

/// Factur-X's properties of this document.
fn properties() -> String {
    let values: String = PROPERTIES
        .iter()
        .map(|(name, value, _)| format!("<fx:{name}>{value}</fx:{name}>"))
        .collect();
    format!("<rdf:Description rdf:about=\"\" xmlns:fx=\"{NAMESPACE}\">{values}</rdf:Description>")
}
