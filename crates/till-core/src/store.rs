//! A store of the network.

use jiff::tz::TimeZone;

/// What the back office provisions for a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreProfile {
    pub name: String,
    /// IANA zone; closures cut days at midnight in it.
    pub timezone: Timezone,
    /// ISO 4217 code; amounts are in its minor unit.
    pub currency: Currency,
    /// The French establishment number printed on fiscal documents.
    pub siret: Option<Siret>,
    /// The seller's identity printed on receipts and invoices.
    pub seller: crate::seller::SellerIdentity,
}

/// An IANA time zone name known to the bundled time zone database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timezone(String);

impl Timezone {
    pub const DEFAULT: &'static str = "Europe/Paris";

    pub fn parse(name: &str) -> Option<Timezone> {
        TimeZone::get(name).ok().map(|_| Timezone(name.to_owned()))
    }

    pub fn default_zone() -> Timezone {
        Timezone(Self::DEFAULT.to_owned())
    }

    pub fn from_trusted(name: String) -> Timezone {
        Timezone(name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn zone(&self) -> TimeZone {
        TimeZone::get(&self.0).unwrap_or(TimeZone::UTC)
    }
}

/// Three uppercase letters, as ISO 4217 writes currency codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Currency(String);

impl Currency {
    pub const DEFAULT: &'static str = "EUR";

    pub fn parse(code: &str) -> Option<Currency> {
        (code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())).then(|| Currency(code.to_owned()))
    }

    pub fn default_currency() -> Currency {
        Currency(Self::DEFAULT.to_owned())
    }

    pub fn from_trusted(code: String) -> Currency {
        Currency(code)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A French SIRET: 14 digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Siret(String);

impl Siret {
    pub fn parse(text: &str) -> Option<Siret> {
        (text.len() == 14 && text.bytes().all(|b| b.is_ascii_digit())).then(|| Siret(text.to_owned()))
    }

    pub fn from_trusted(text: String) -> Siret {
        Siret(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_fields_parse_their_standard_forms() {
        assert!(Timezone::parse("Europe/Paris").is_some());
        assert!(Timezone::parse("America/Martinique").is_some());
        assert!(Timezone::parse("Mars/Olympus").is_none());
        assert!(Currency::parse("EUR").is_some());
        assert!(Currency::parse("eur").is_none());
        assert!(Siret::parse("73282932000074").is_some());
        assert!(Siret::parse("7328293200007").is_none());
    }
}
