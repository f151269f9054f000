//! The customer directory's rules: an e-mail address with a domain, a phone number in E.164
//! whatever common form it was typed in, an id that is not itself personal data, and the
//! consent flags whose every change is kept with its time and source.
//!
//! A customer's id is sealed in the fiscal journal with each sale that names them; the
//! directory's personal fields are not, so they can be erased while the journal still verifies.

use std::collections::BTreeSet;

/// Longest display name, postal code, group name and notes, in characters.
pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_POSTAL_CODE_CHARS: usize = 20;
pub const MAX_GROUP_CHARS: usize = 64;
pub const MAX_GROUPS: usize = 50;
pub const MAX_NOTES_CHARS: usize = 2_000;
/// Longest e-mail address (the SMTP path limit).
pub const MAX_EMAIL_CHARS: usize = 254;

/// An e-mail address with a domain (`name@example.fr`), kept lowercased so that a search by
/// address finds it however it was typed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Email(String);

impl Email {
    pub fn parse(text: &str) -> Option<Email> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_EMAIL_CHARS {
            return None;
        }
        let options = email_address::Options::default()
            .with_required_tld()
            .without_domain_literal()
            .without_display_text();
        let address = email_address::EmailAddress::parse_with_options(text, options).ok()?;
        Some(Email(address.email().to_lowercase()))
    }

    pub fn from_trusted(value: String) -> Email {
        Email(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A phone number in E.164 (`+33612345678`). French national forms (`06 12 34 56 78`,
/// `06.12.34.56.78`), the international prefix `00` and `+` forms with spaces, dots, dashes,
/// parentheses or a bracketed trunk zero (`+33 (0)6 ...`) all read as the same number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Phone(String);

/// E.164 allows at most fifteen digits; fewer than eight is no subscriber number anywhere.
const MIN_E164_DIGITS: usize = 8;
const MAX_E164_DIGITS: usize = 15;

impl Phone {
    pub fn parse(text: &str) -> Option<Phone> {
        let text = text.trim().replace("(0)", "");
        let (international, rest) = match text.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let mut digits = String::with_capacity(rest.len());
        for c in rest.chars() {
            match c {
                '0'..='9' => digits.push(c),
                ' ' | '.' | '-' | '(' | ')' | '/' | '\u{a0}' => {}
                _ => return None,
            }
        }
        let international_digits = if international {
            digits
        } else if let Some(after) = digits.strip_prefix("00") {
            after.to_owned()
        } else if digits.len() == 10 && digits.starts_with('0') && !digits[1..].starts_with('0') {
            // A French national number: the trunk zero, then nine digits.
            format!("33{}", &digits[1..])
        } else {
            return None;
        };
        let e164 = international_digits;
        if e164.starts_with('0') || !(MIN_E164_DIGITS..=MAX_E164_DIGITS).contains(&e164.len()) {
            return None;
        }
        // A French number is the country code and nine digits, the first not a zero.
        if let Some(national) = e164.strip_prefix("33")
            && (national.len() != 9 || national.starts_with('0'))
        {
            return None;
        }
        Some(Phone(format!("+{e164}")))
    }

    pub fn from_trusted(value: String) -> Phone {
        Phone(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether a customer id is itself personal data: an e-mail address or a phone number. Ids
/// are sealed in the journal with every sale and can never be erased from it.
pub fn id_is_personal(id: &str) -> bool {
    id.contains('@') || Phone::parse(id).is_some()
}

/// What a search text asks for: an address, a phone number, or words of the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchText {
    Email(Email),
    Phone(Phone),
    Name(crate::words::NameQuery),
}

impl SearchText {
    /// An address when the text holds an `@`, a phone number when it reads as one, words of
    /// the name otherwise.
    pub fn parse(text: &str) -> Result<SearchText, crate::words::QueryProblem> {
        if text.contains('@')
            && let Some(email) = Email::parse(text)
        {
            return Ok(SearchText::Email(email));
        }
        if let Some(phone) = Phone::parse(text) {
            return Ok(SearchText::Phone(phone));
        }
        crate::words::NameQuery::parse(text).map(SearchText::Name)
    }
}

/// A consent flag a customer may give or withdraw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConsentFlag {
    MarketingEmail,
    MarketingSms,
    EReceipt,
}

impl ConsentFlag {
    pub const ALL: [ConsentFlag; 3] = [
        ConsentFlag::MarketingEmail,
        ConsentFlag::MarketingSms,
        ConsentFlag::EReceipt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ConsentFlag::MarketingEmail => "marketingEmail",
            ConsentFlag::MarketingSms => "marketingSms",
            ConsentFlag::EReceipt => "eReceipt",
        }
    }

    pub fn parse(text: &str) -> Option<ConsentFlag> {
        ConsentFlag::ALL.into_iter().find(|flag| flag.as_str() == text)
    }
}

/// Where a consent change was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsentSource {
    Till,
    Console,
    Api,
}

impl ConsentSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentSource::Till => "till",
            ConsentSource::Console => "console",
            ConsentSource::Api => "api",
        }
    }

    pub fn parse(text: &str) -> Option<ConsentSource> {
        [ConsentSource::Till, ConsentSource::Console, ConsentSource::Api]
            .into_iter()
            .find(|source| source.as_str() == text)
    }
}

/// The consent flags as they stand; all withdrawn until given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Consent {
    pub marketing_email: bool,
    pub marketing_sms: bool,
    pub e_receipt: bool,
}

impl Consent {
    pub fn get(self, flag: ConsentFlag) -> bool {
        match flag {
            ConsentFlag::MarketingEmail => self.marketing_email,
            ConsentFlag::MarketingSms => self.marketing_sms,
            ConsentFlag::EReceipt => self.e_receipt,
        }
    }

    /// The flags `next` changes from `self`, each with its new value: what the history keeps.
    pub fn changes_to(self, next: Consent) -> Vec<(ConsentFlag, bool)> {
        ConsentFlag::ALL
            .into_iter()
            .filter(|flag| self.get(*flag) != next.get(*flag))
            .map(|flag| (flag, next.get(flag)))
            .collect()
    }
}

/// A profile as written: every field optional but the consent, which stands as it was when
/// left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub display_name: Option<String>,
    pub email: Option<Email>,
    pub phone: Option<Phone>,
    pub postal_code: Option<String>,
    pub birth_date: Option<jiff::civil::Date>,
    pub groups: BTreeSet<String>,
    pub notes: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn french_and_international_forms_read_as_one_number() {
        for form in [
            "06 12 34 56 78",
            "0612345678",
            "06.12.34.56.78",
            "06-12-34-56-78",
            "+33 6 12 34 56 78",
            "+33612345678",
            "+33 (0)6 12 34 56 78",
            "0033612345678",
            "0033 6 12 34 56 78",
        ] {
            assert_eq!(
                Phone::parse(form).map(|p| p.0),
                Some("+33612345678".to_owned()),
                "{form}"
            );
        }
        assert_eq!(Phone::parse("+44 20 7946 0958").unwrap().as_str(), "+442079460958");
        assert_eq!(Phone::parse("+1 (415) 555-0100").unwrap().as_str(), "+14155550100");
        assert_eq!(Phone::parse("0044 20 7946 0958").unwrap().as_str(), "+442079460958");
    }

    #[test]
    fn what_is_not_a_phone_number_is_refused() {
        for text in [
            "",
            "12345",
            "061234567",
            "06123456789",
            "0012",
            "+33 06 12 34 56 78 9",
            "+33 1234",
            "+0 612 345 678",
            "06 12 34 56 7a",
            "+1234567890123456",
            "client-7",
            "0000000000",
        ] {
            assert_eq!(Phone::parse(text), None, "{text}");
        }
    }

    #[test]
    fn an_address_needs_a_domain() {
        assert_eq!(
            Email::parse(" Marie.Martin@Example.FR ").unwrap().as_str(),
            "marie.martin@example.fr"
        );
        for text in [
            "marie",
            "marie@",
            "@example.fr",
            "marie@localhost",
            "a b@example.fr",
            "Marie <m@example.fr>",
        ] {
            assert_eq!(Email::parse(text), None, "{text}");
        }
    }

    #[test]
    fn ids_that_are_addresses_or_numbers_are_personal() {
        assert!(id_is_personal("marie@example.fr"));
        assert!(id_is_personal("0612345678"));
        assert!(id_is_personal("+33612345678"));
        assert!(!id_is_personal("client-7"));
        assert!(!id_is_personal("C-000123"));
    }

    #[test]
    fn a_search_reads_an_address_a_number_or_words() {
        assert!(matches!(
            SearchText::parse("MARIE@example.fr"),
            Ok(SearchText::Email(_))
        ));
        assert!(matches!(SearchText::parse("06 12 34 56 78"), Ok(SearchText::Phone(_))));
        assert!(matches!(SearchText::parse("Marie Mar"), Ok(SearchText::Name(_))));
    }

    #[test]
    fn only_changed_flags_are_history() {
        let before = Consent {
            marketing_email: true,
            ..Consent::default()
        };
        let after = Consent {
            marketing_email: false,
            e_receipt: true,
            ..Consent::default()
        };
        assert_eq!(
            before.changes_to(after),
            [(ConsentFlag::MarketingEmail, false), (ConsentFlag::EReceipt, true)]
        );
        assert!(after.changes_to(after).is_empty());
    }
}
