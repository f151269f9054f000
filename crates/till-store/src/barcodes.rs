//! Barcodes of the catalog's articles (table `sku_barcodes`, migration 0011): each kept as
//! written, keyed by the GTIN it stands for, so that one barcode names one article whichever of
//! its forms is scanned.

use crate::catalog::{CatalogWrite, placeholders, value_rows};
use crate::db::Store;
use crate::error::{Conflict, StoreError};
use crate::sql::{Conn, query};
use std::collections::{HashMap, HashSet};
use till_core::barcode::Gtin;
use till_core::ids::SkuId;

/// Rows per multi-row statement: 4 parameters each.
const CHUNK: usize = 500;

impl Store {
    pub async fn sku_of_barcode(&self, gtin: &Gtin) -> Result<Option<SkuId>, StoreError> {
        let row = query("SELECT sku_id FROM sku_barcodes WHERE gtin = $1")
            .bind(gtin.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok(SkuId::from_trusted(row.try_get("sku_id")?)))
            .transpose()
    }
}

/// Gives each write that names barcodes exactly those, in its order; a write naming none
/// leaves its article's as they are. A barcode another article keeps is refused
/// ([`Conflict::BarcodeTaken`]), as is one that two articles of the same writes name.
/// `known`: the `(sku_id, name)` of the articles the catalog held before the write (only
/// theirs can have barcodes to forget).
pub(crate) async fn replace(
    conn: &mut Conn,
    writes: &[CatalogWrite],
    known: &[(String, String)],
) -> Result<(), StoreError> {
    let named: Vec<&CatalogWrite> = writes.iter().filter(|w| w.barcodes.is_some()).collect();
    if named.is_empty() {
        return Ok(());
    }
    let mut claimed: HashMap<&str, (&str, &SkuId)> = HashMap::new();
    for write in &named {
        for barcode in write.barcodes.iter().flatten() {
            if let Some((_, other)) = claimed.insert(barcode.gtin.as_str(), (&barcode.written, &write.item.sku_id))
                && *other != write.item.sku_id
            {
                return Err(taken(&barcode.written, other));
            }
        }
    }
    let known: HashSet<&str> = known.iter().map(|(sku_id, _)| sku_id.as_str()).collect();
    let renamed: Vec<&str> = named
        .iter()
        .map(|write| write.item.sku_id.as_str())
        .filter(|sku_id| known.contains(sku_id))
        .collect();
    for chunk in renamed.chunks(CHUNK) {
        let mut delete = query(format!(
            "DELETE FROM sku_barcodes WHERE sku_id IN ({})",
            placeholders(1, chunk.len())
        ));
        for sku_id in chunk {
            delete = delete.bind(*sku_id);
        }
        delete.execute(&mut *conn).await?;
    }
    // What is left belongs to articles these writes do not name: none may keep a claimed one.
    let mut gtins: Vec<&str> = claimed.keys().copied().collect();
    gtins.sort_unstable();
    for chunk in gtins.chunks(CHUNK) {
        let mut kept = query(format!(
            "SELECT gtin, sku_id FROM sku_barcodes WHERE gtin IN ({}) ORDER BY gtin LIMIT 1",
            placeholders(1, chunk.len())
        ));
        for gtin in chunk {
            kept = kept.bind(*gtin);
        }
        if let Some(row) = kept.fetch_optional(&mut *conn).await? {
            let gtin: String = row.try_get("gtin")?;
            let written = claimed
                .get(gtin.as_str())
                .map(|(written, _)| *written)
                .unwrap_or_default();
            return Err(taken(written, &SkuId::from_trusted(row.try_get("sku_id")?)));
        }
    }
    let mut rows: Vec<(&SkuId, usize, &str, &str)> = named
        .iter()
        .flat_map(|write| {
            write.barcodes.iter().flatten().enumerate().map(|(position, barcode)| {
                (
                    &write.item.sku_id,
                    position,
                    barcode.gtin.as_str(),
                    barcode.written.as_str(),
                )
            })
        })
        .collect();
    // By barcode, the table's key: the inserts walk its pages in turn.
    rows.sort_unstable_by_key(|(_, _, gtin, _)| *gtin);
    for chunk in rows.chunks(CHUNK) {
        let values = value_rows(chunk.len(), 4, 1, "");
        let mut insert = query(format!(
            "INSERT INTO sku_barcodes (gtin, sku_id, barcode, position) VALUES {values}"
        ));
        for (sku_id, position, gtin, written) in chunk {
            insert = insert
                .bind(*gtin)
                .bind(sku_id.as_str())
                .bind(*written)
                .bind(*position as i64);
        }
        insert.execute(&mut *conn).await?;
    }
    Ok(())
}

fn taken(barcode: &str, sku: &SkuId) -> StoreError {
    StoreError::Conflict(Conflict::BarcodeTaken {
        barcode: barcode.to_owned(),
        sku: sku.clone(),
    })
}
