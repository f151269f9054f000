//! Draws the Factur-X PDF of each invoice of a directory with the API's own renderer: for
//! every `NAME.json` (an invoice's answer, as till-core's example `invoice_samples` writes it
//! beside `NAME.xml`), writes `NAME.pdf` with `NAME.xml` embedded, for scripts/invoice-validate
//! to check with tools that are not till's:
//!
//!     cargo run -p till-api --example invoice_pdfs -- DIR

use std::error::Error;
use std::path::PathBuf;
use till_api::invoice_pdf;
use till_core::invoice::InvoiceAnswer;

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: invoice_pdfs DIR")?);
    let mut answers: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    answers.sort();
    for path in answers {
        let answer: InvoiceAnswer = serde_json::from_slice(&std::fs::read(&path)?)?;
        let xml = std::fs::read(path.with_extension("xml"))?;
        let pdf = invoice_pdf::render(&answer, &xml)?;
        let out = path.with_extension("pdf");
        std::fs::write(&out, &pdf)?;
        println!("{} {} ({} bytes)", out.display(), answer.number, pdf.len());
    }
    Ok(())
}
