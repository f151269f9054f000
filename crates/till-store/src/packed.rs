//! A sale's stored answer and document, compressed together into one value (`sales.packed`).
//!
//! The answer (the 201 body replayed for a repeated transaction id) and the document (lines,
//! tenders, VAT, reductions) are JSON that repeats itself: every article's id is in both, and in
//! the answer's stock movements too. Kept as two texts they overflowed SQLite's page for every
//! sale, written to the log, copied back by the checkpointer and synced; on PostgreSQL a row
//! that large is compressed by the server, with its own slower codec, inside the sale's
//! statement. Packed with LZ4 on the request's task, the row fits a page ("Packed sale rows"
//! in docs/performance.md).
//!
//! Layout: one format byte (`LZ4`), the answer's length and the two texts' length (each a
//! little-endian `u32`), then the two texts one after the other as one LZ4 block. The row's
//! `response` column is left empty and its `detail` null.

use crate::error::StoreError;
use crate::sql::Row;

/// The only format so far: an LZ4 block of the answer followed by the document.
const LZ4: u8 = 1;

const HEADER: usize = 1 + 4 + 4;

/// More than any sale's two texts unpack to; a length past it is a damaged value, refused
/// before anything is allocated for it.
const MOST_UNPACKED: usize = 64 << 20;

/// The answer and the document, packed.
pub fn pack(response: &str, detail: &str) -> Result<Vec<u8>, StoreError> {
    let mut texts = String::with_capacity(response.len() + detail.len());
    texts.push_str(response);
    texts.push_str(detail);
    let block = lz4_flex::block::compress(texts.as_bytes());
    let mut packed = Vec::with_capacity(HEADER + block.len());
    packed.push(LZ4);
    packed.extend_from_slice(&length(response.len())?.to_le_bytes());
    packed.extend_from_slice(&length(texts.len())?.to_le_bytes());
    packed.extend_from_slice(&block);
    Ok(packed)
}

/// The answer and the document of a packed value.
pub fn unpack(packed: &[u8]) -> Result<Unpacked, StoreError> {
    let damaged = || StoreError::Corrupt("a sale's packed answer and document cannot be read".into());
    let (bytes, response_len) = unpack_bytes(packed)?;
    let mut texts = String::from_utf8(bytes).map_err(|_| damaged())?;
    if !texts.is_char_boundary(response_len) {
        return Err(damaged());
    }
    let detail = texts.split_off(response_len);
    Ok(Unpacked {
        response: texts,
        detail,
    })
}

/// The two texts of a packed value as bytes, and where the document begins.
fn unpack_bytes(packed: &[u8]) -> Result<(Vec<u8>, usize), StoreError> {
    let damaged = || StoreError::Corrupt("a sale's packed answer and document cannot be read".into());
    let (&format, rest) = packed.split_first().ok_or_else(damaged)?;
    if format != LZ4 || rest.len() < HEADER - 1 {
        return Err(damaged());
    }
    let (lengths, block) = rest.split_at(HEADER - 1);
    let response_len = read_length(&lengths[..4]);
    let total = read_length(&lengths[4..]);
    if total > MOST_UNPACKED || response_len > total {
        return Err(damaged());
    }
    let bytes = lz4_flex::block::decompress(block, total).map_err(|_| damaged())?;
    if bytes.len() != total {
        return Err(damaged());
    }
    Ok((bytes, response_len))
}

/// Reads the document of a sale row selected with its `packed` column as a `T`, straight from
/// its bytes: a total over many sales spares each the copies of a text.
pub(crate) fn read_detail<T: serde::de::DeserializeOwned>(row: &Row) -> Result<T, StoreError> {
    let (bytes, response_len) = unpack_bytes(&row.try_get::<Vec<u8>>("packed")?)?;
    serde_json::from_slice(&bytes[response_len..])
        .map_err(|_| StoreError::Corrupt("a sale's detail cannot be read".into()))
}

pub struct Unpacked {
    pub response: String,
    pub detail: String,
}

/// The stored answer of a sale row selected with its `packed` column.
pub(crate) fn response_of(row: &Row) -> Result<String, StoreError> {
    Ok(unpack(&row.try_get::<Vec<u8>>("packed")?)?.response)
}

/// The document of a sale row selected with its `packed` column.
pub(crate) fn detail_of(row: &Row) -> Result<String, StoreError> {
    Ok(unpack(&row.try_get::<Vec<u8>>("packed")?)?.detail)
}

fn length(len: usize) -> Result<u32, StoreError> {
    u32::try_from(len)
        .ok()
        .filter(|&len| len as usize <= MOST_UNPACKED)
        .ok_or_else(|| StoreError::Corrupt("a sale's answer and document are too long to keep".into()))
}

fn read_length(bytes: &[u8]) -> usize {
    let mut le = [0u8; 4];
    le.copy_from_slice(bytes);
    u32::from_le_bytes(le) as usize
}

#[cfg(test)]
mod tests {
    use super::{HEADER, LZ4, pack, unpack};
    use proptest::prelude::*;

    const ANSWER: &str = r#"{"id":"evt_1","transaction":{"lines":[{"skuId":"c335a16afe90","quantity":3}]},"stockMovements":[{"skuId":"c335a16afe90","deltaQuantity":-3}]}"#;
    const DOCUMENT: &str = r#"{"lines":[{"lineId":"l0","skuId":"c335a16afe90","label":"Café crème","quantity":3}],"tenders":[],"vat":[],"adjustments":[]}"#;

    #[test]
    fn a_packed_sale_unpacks_to_its_two_texts_and_is_smaller() {
        let packed = pack(ANSWER, DOCUMENT).expect("packs");
        let unpacked = unpack(&packed).expect("unpacks");
        assert_eq!(unpacked.response, ANSWER);
        assert_eq!(unpacked.detail, DOCUMENT);
        assert!(packed.len() < ANSWER.len() + DOCUMENT.len(), "{} bytes", packed.len());
    }

    #[test]
    fn damaged_values_are_refused_not_trusted() {
        let packed = pack(ANSWER, DOCUMENT).expect("packs");
        let mut unknown_format = packed.clone();
        unknown_format[0] = LZ4 + 1;
        let mut answer_past_the_end = packed.clone();
        answer_past_the_end[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut huge = packed.clone();
        huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut shorter_than_said = packed.clone();
        shorter_than_said[5..9].copy_from_slice(&((ANSWER.len() + DOCUMENT.len() + 1) as u32).to_le_bytes());
        for damaged in [
            &[][..],
            &packed[..HEADER - 1],
            &packed[..packed.len() - 1],
            &unknown_format,
            &answer_past_the_end,
            &huge,
            &shorter_than_said,
        ] {
            assert!(unpack(damaged).is_err(), "{damaged:?}");
        }
    }

    proptest! {
        #[test]
        fn any_two_texts_survive_packing(response in ".{0,300}", detail in ".{0,300}") {
            let unpacked = unpack(&pack(&response, &detail).expect("packs")).expect("unpacks");
            prop_assert_eq!(unpacked.response, response);
            prop_assert_eq!(unpacked.detail, detail);
        }

        #[test]
        fn a_damaged_byte_is_an_error_or_other_texts_never_a_panic(at in 0usize..200, byte in any::<u8>()) {
            let mut packed = pack(ANSWER, DOCUMENT).expect("packs");
            let at = at % packed.len();
            packed[at] = byte;
            let _ = unpack(&packed);
        }
    }
}
