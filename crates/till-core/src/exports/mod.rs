//! What a French accountant and the tax administration take out of the journal: the FEC
//! (Fichier des Écritures Comptables) and the e-reporting aggregates of B2C sales. Both are
//! derived from the sealed day closures of the registers and from the tickets those closures
//! cover, so that journal, FEC and e-reporting reconcile to the cent.

pub mod bundle;
pub mod ereporting;
pub mod fec;

use crate::fiscal::payload::SaleRecordVat;
use crate::store::Timezone;
use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::BTreeMap;
use std::fmt;

/// A register's day as its sealed closure and the tickets it covers show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosedDay {
    pub register_id: String,
    pub store_id: String,
    /// The local day closed.
    pub date: Date,
    /// The local day the closure was sealed on: when the figures were fixed.
    pub closed_on: Date,
    /// The closure's entry in the register's closure chain.
    pub closure_seq: i64,
    /// The breakdown the closure sealed: per rate, total VAT included and VAT, returns
    /// subtracted.
    pub sealed_vat: Vec<SaleRecordVat>,
    /// The same day read from its tickets, sales and returns apart.
    pub tickets: DayTickets,
    /// The part of `tickets` invoiced to businesses (docs/invoices.md): sales an invoice covers
    /// and returns a credit invoice covers, whenever the invoice was issued.
    pub invoiced: DayTickets,
}

/// Two sums of cents: a total VAT included and the VAT it contains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amounts {
    pub total_cents: i64,
    pub vat_cents: i64,
}

impl Amounts {
    fn add(&mut self, total: i64, vat: i64) -> Result<(), Overflow> {
        self.total_cents = self.total_cents.checked_add(total).ok_or(Overflow)?;
        self.vat_cents = self.vat_cents.checked_add(vat).ok_or(Overflow)?;
        Ok(())
    }

    /// The total without its VAT.
    pub fn net_cents(self) -> Result<i64, Overflow> {
        self.total_cents.checked_sub(self.vat_cents).ok_or(Overflow)
    }
}

/// One VAT rate of a day's tickets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RateFigures {
    /// What sales took at this rate (positive parts of tickets).
    pub sales: Amounts,
    /// What returns gave back at this rate (negative parts): zero or negative.
    pub returns: Amounts,
    /// Tickets with a part at this rate, sales and returns alike.
    pub tickets: i64,
}

/// One tender method of a day's tickets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TenderFigures {
    /// What came in on sales: applied plus forfeited, zero or positive.
    pub received_cents: i64,
    /// What went out on returns: zero or negative.
    pub refunded_cents: i64,
    /// The part of `received_cents` kept over the amount due (a meal voucher worth more).
    pub forfeited_cents: i64,
}

/// A day's tickets summed per VAT rate and per tender method.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DayTickets {
    /// Per rate in hundredths of a percent.
    pub rates: BTreeMap<i64, RateFigures>,
    /// Per method.
    pub tenders: BTreeMap<String, TenderFigures>,
}

/// A tender of one ticket as its record holds it.
pub struct TicketTender<'a> {
    pub method: &'a str,
    pub applied_cents: i64,
    pub forfeited_cents: i64,
}

impl DayTickets {
    /// Adds one ticket: its VAT breakdown and its tenders. A return's parts are negative.
    pub fn add(&mut self, vat: &[SaleRecordVat], tenders: &[TicketTender<'_>]) -> Result<(), Overflow> {
        for part in vat {
            let rate = self.rates.entry(part.vat_rate).or_default();
            let side = if part.total_cents < 0 {
                &mut rate.returns
            } else {
                &mut rate.sales
            };
            side.add(part.total_cents, part.vat_cents)?;
            rate.tickets = rate.tickets.checked_add(1).ok_or(Overflow)?;
        }
        for tender in tenders {
            let figures = self.tenders.entry(tender.method.to_owned()).or_default();
            let amount = tender
                .applied_cents
                .checked_add(tender.forfeited_cents)
                .ok_or(Overflow)?;
            if amount < 0 {
                figures.refunded_cents = figures.refunded_cents.checked_add(amount).ok_or(Overflow)?;
            } else {
                figures.received_cents = figures.received_cents.checked_add(amount).ok_or(Overflow)?;
            }
            figures.forfeited_cents = figures
                .forfeited_cents
                .checked_add(tender.forfeited_cents)
                .ok_or(Overflow)?;
        }
        Ok(())
    }
}

/// A sum past the largest amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// Why a day cannot be exported. A wrong file is never written instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExportError {
    /// The tickets a day's closure covers do not add up to what the closure sealed.
    NotAsSealed { register_id: String, date: Date },
    /// A day's tenders do not pay for its sales: its entry would not balance.
    Unbalanced {
        register_id: String,
        date: Date,
        debit_cents: i64,
        credit_cents: i64,
    },
    /// A sum past the largest amount.
    Overflow { register_id: String, date: Date },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::NotAsSealed { register_id, date } => write!(
                f,
                "The tickets of register {register_id} on {date} do not add up to its sealed day closure; verify its journal."
            ),
            ExportError::Unbalanced {
                register_id,
                date,
                debit_cents,
                credit_cents,
            } => write!(
                f,
                "The entry of register {register_id} on {date} does not balance (debit {debit_cents}, credit {credit_cents} cents); verify its journal."
            ),
            ExportError::Overflow { register_id, date } => {
                write!(
                    f,
                    "The figures of register {register_id} on {date} pass the largest amount."
                )
            }
        }
    }
}

impl std::error::Error for ExportError {}

impl ClosedDay {
    fn overflow(&self) -> ExportError {
        ExportError::Overflow {
            register_id: self.register_id.clone(),
            date: self.date,
        }
    }

    /// Refuses a day whose tickets do not add up, per rate, to what its closure sealed.
    pub fn ensure_as_sealed(&self) -> Result<(), ExportError> {
        let mut from_tickets: BTreeMap<i64, Amounts> = BTreeMap::new();
        for (rate, figures) in &self.tickets.rates {
            let sum = from_tickets.entry(*rate).or_default();
            for side in [figures.sales, figures.returns] {
                sum.add(side.total_cents, side.vat_cents).map_err(|_| self.overflow())?;
            }
        }
        let mut sealed: BTreeMap<i64, Amounts> = BTreeMap::new();
        for part in &self.sealed_vat {
            sealed
                .entry(part.vat_rate)
                .or_default()
                .add(part.total_cents, part.vat_cents)
                .map_err(|_| self.overflow())?;
        }
        let nonzero = |map: BTreeMap<i64, Amounts>| -> BTreeMap<i64, Amounts> {
            map.into_iter().filter(|(_, a)| *a != Amounts::default()).collect()
        };
        if nonzero(from_tickets) == nonzero(sealed) {
            Ok(())
        } else {
            Err(ExportError::NotAsSealed {
                register_id: self.register_id.clone(),
                date: self.date,
            })
        }
    }
}

/// The local day it is in a store's time zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Today {
    pub date: Date,
    /// The IANA name of the zone.
    pub zone: String,
}

/// The last day a period of an export, an archive or a bundle may end on: today in the zone,
/// among `zones` (those of the stores the period covers), where today began last. A later day
/// has not begun in at least one of those stores, so nothing of it can be closed, exported or
/// archived yet. With no zone, the default one's today.
pub fn last_day_begun(zones: &[Timezone], now: Timestamp) -> Today {
    let today = |zone: &Timezone| Today {
        date: now.to_zoned(zone.zone()).date(),
        zone: zone.as_str().to_owned(),
    };
    zones
        .iter()
        .map(today)
        .min_by(|a, b| (a.date, &a.zone).cmp(&(b.date, &b.zone)))
        .unwrap_or_else(|| today(&Timezone::default_zone()))
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// A day of register `r1` with tickets given as `(rate, total, vat, method)`.
    pub(crate) fn day(date: &str, tickets: &[(i64, i64, i64, &str)]) -> ClosedDay {
        let mut figures = DayTickets::default();
        let mut sealed: BTreeMap<i64, Amounts> = BTreeMap::new();
        for (rate, total, vat, method) in tickets {
            let part = SaleRecordVat {
                vat_rate: *rate,
                total_cents: *total,
                vat_cents: *vat,
            };
            let tender = TicketTender {
                method,
                applied_cents: *total,
                forfeited_cents: 0,
            };
            figures.add(&[part], &[tender]).unwrap();
            sealed.entry(*rate).or_default().add(*total, *vat).unwrap();
        }
        let date: Date = date.parse().unwrap();
        ClosedDay {
            register_id: "r1".into(),
            store_id: "s1".into(),
            date,
            closed_on: date.tomorrow().unwrap(),
            closure_seq: 1,
            sealed_vat: sealed
                .into_iter()
                .rev()
                .map(|(vat_rate, a)| SaleRecordVat {
                    vat_rate,
                    total_cents: a.total_cents,
                    vat_cents: a.vat_cents,
                })
                .collect(),
            tickets: figures,
            invoiced: DayTickets::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::day;
    use super::*;

    #[test]
    fn returns_are_kept_apart_from_sales_and_the_sums_match_the_seal() {
        let day = day(
            "2026-03-31",
            &[
                (2000, 1450, 242, "card"),
                (2000, -1450, -242, "card"),
                (550, 260, 14, "cash"),
            ],
        );
        let rate = &day.tickets.rates[&2000];
        assert_eq!(rate.sales.total_cents, 1450);
        assert_eq!(rate.returns.total_cents, -1450);
        assert_eq!(rate.tickets, 2);
        assert_eq!(day.tickets.tenders["card"].refunded_cents, -1450);
        assert_eq!(day.ensure_as_sealed(), Ok(()));
        let mut altered = day.clone();
        altered.sealed_vat[0].total_cents += 1;
        assert!(matches!(
            altered.ensure_as_sealed(),
            Err(ExportError::NotAsSealed { .. })
        ));
    }

    #[test]
    fn a_sum_past_the_largest_amount_is_refused() {
        let mut figures = DayTickets::default();
        let part = |total| SaleRecordVat {
            vat_rate: 2000,
            total_cents: total,
            vat_cents: 0,
        };
        figures.add(&[part(i64::MAX)], &[]).unwrap();
        assert_eq!(figures.add(&[part(1)], &[]), Err(Overflow));
    }

    #[test]
    fn a_period_may_end_today_where_today_began_last() {
        let zones = |names: &[&str]| -> Vec<Timezone> { names.iter().map(|n| Timezone::parse(n).unwrap()).collect() };
        // 23:30 in Paris on the 26th is already the 27th in Noumea.
        let now: Timestamp = "2026-11-26T22:30:00Z".parse().unwrap();
        let paris = last_day_begun(&zones(&["Europe/Paris"]), now);
        assert_eq!(
            (paris.date.to_string(), paris.zone.as_str()),
            ("2026-11-26".to_owned(), "Europe/Paris")
        );
        let noumea = last_day_begun(&zones(&["Pacific/Noumea"]), now);
        assert_eq!(noumea.date.to_string(), "2026-11-27");
        let both = last_day_begun(&zones(&["Pacific/Noumea", "Europe/Paris"]), now);
        assert_eq!(both, paris);
        assert_eq!(last_day_begun(&[], now), paris, "the default zone");
    }
}
