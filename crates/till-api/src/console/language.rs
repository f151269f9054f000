//! The language a page is written in, chosen per request: the visitor's own choice (the
//! switch in the page frame keeps it in a cookie), else the best of the browser's
//! `Accept-Language`, else the deployment's default (`console_language`).

use super::href::Href;
use axum::extract::FromRequestParts;
use axum::http::header::{ACCEPT_LANGUAGE, LOCATION, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;

/// A language the console is written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Language {
    /// The default: till is made for French shops.
    #[default]
    French,
    English,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::French, Language::English];

    /// The language's tag, as `<html lang>`, the cookie and `console_language` write it.
    pub fn code(self) -> &'static str {
        match self {
            Language::French => "fr",
            Language::English => "en",
        }
    }

    /// `fr` or `en`, in any case.
    pub fn parse(text: &str) -> Option<Language> {
        Language::ALL
            .into_iter()
            .find(|language| language.code().eq_ignore_ascii_case(text.trim()))
    }

    /// Its own name, as the switch shows it.
    pub fn own_name(self) -> &'static str {
        match self {
            Language::French => "Français",
            Language::English => "English",
        }
    }
}

/// The language of the deployment, for a visitor who chose none and whose browser asks for
/// neither: the console's routes carry it as an extension.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultLanguage(pub Language);

/// The cookie that keeps the visitor's choice.
const COOKIE_NAME: &str = "till_lang";

/// The language a page is written in, and the address it was asked at (a page read with GET),
/// for the language switch to come back to. Put in the request's extensions by the console's
/// frame middleware.
#[derive(Clone, Debug)]
pub struct Frame {
    pub language: Language,
    pub here: Option<String>,
}

impl Frame {
    /// What `parts` asks for; `default` when it asks for nothing the console speaks.
    pub fn of(parts: &Parts) -> Frame {
        let default = parts.extensions.get::<DefaultLanguage>().copied().unwrap_or_default().0;
        let language = chosen(&parts.headers)
            .or_else(|| {
                parts
                    .headers
                    .get_all(ACCEPT_LANGUAGE)
                    .iter()
                    .filter_map(|value| value.to_str().ok())
                    .find_map(from_accept_language)
            })
            .unwrap_or(default);
        let here = (parts.method == axum::http::Method::GET)
            .then(|| parts.uri.path_and_query().map(|p| p.as_str().to_owned()))
            .flatten()
            .filter(|address| console_address(address));
        Frame { language, here }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Frame {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Frame>()
            .cloned()
            .unwrap_or_else(|| Frame::of(parts)))
    }
}

/// The language the cookie holds, if any.
fn chosen(headers: &HeaderMap) -> Option<Language> {
    super::cookie(headers, COOKIE_NAME).and_then(Language::parse)
}

/// The language of `Accept-Language` (RFC 9110) the console speaks that the browser prefers
/// most: the highest weight wins, the first listed among equals. `*` stands for no language in
/// particular and leaves the choice to the default. Anything unreadable is skipped.
pub fn from_accept_language(header: &str) -> Option<Language> {
    let mut best: Option<(u16, Language)> = None;
    for item in header.split(',') {
        let mut parts = item.split(';');
        let tag = parts.next().unwrap_or_default().trim();
        let mut weight = Some(1000);
        for parameter in parts {
            if let Some((name, value)) = parameter.split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                weight = quality(value.trim());
            }
        }
        let Some(weight) = weight.filter(|weight| *weight > 0) else {
            continue;
        };
        let primary = tag.split('-').next().unwrap_or_default();
        let Some(language) = Language::parse(primary) else {
            continue;
        };
        if best.is_none_or(|(held, _)| weight > held) {
            best = Some((weight, language));
        }
    }
    best.map(|(_, language)| language)
}

/// A weight `0` to `1` with at most three decimals, in thousandths; none when malformed.
fn quality(text: &str) -> Option<u16> {
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    if decimals.len() > 3 || !decimals.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fraction = decimals
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .fold(0u16, |sum, digit| sum * 10 + u16::from(digit - b'0'));
    match whole {
        "0" => Some(fraction),
        "1" if fraction == 0 => Some(1000),
        _ => None,
    }
}

/// Whether `address` is a page of the console a visitor may be sent back to: a path of this
/// origin under `/console`, printable ASCII only.
fn console_address(address: &str) -> bool {
    let under = address == "/console" || address.starts_with("/console/") || address.starts_with("/console?");
    under && address.bytes().all(|b| b.is_ascii_graphic())
}

/// The switch's link to `language`, back to `here`.
pub fn switch_href(language: Language, here: Option<&str>) -> Href {
    Href::to("/console/language")
        .query("to", language.code())
        .query_some("back", here)
}

/// `GET /console/language?to=fr&back=/console/sales`: keeps the choice in a cookie for a year
/// and goes back to the page. A choice the console does not speak, or a page elsewhere, is
/// ignored rather than refused: the link is only a preference.
pub async fn switch(uri: Uri, secure: Option<axum::Extension<super::SecureCookies>>) -> Response {
    let query = crate::extract::query_pairs(uri.query().unwrap_or_default()).unwrap_or_default();
    let field = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let back = field("back").filter(|back| console_address(back)).unwrap_or("/console");
    let location = HeaderValue::from_str(back).unwrap_or(HeaderValue::from_static("/console"));
    let mut response = (StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response();
    if let Some(language) = field("to").and_then(Language::parse) {
        let secure = if secure.is_some() { "; Secure" } else { "" };
        let cookie = format!(
            "{COOKIE_NAME}={}; HttpOnly; SameSite=Lax; Path=/console; Max-Age=31536000{secure}",
            language.code()
        );
        if let Ok(cookie) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(SET_COOKIE, cookie);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heaviest_language_the_console_speaks_wins() {
        let best = |header| from_accept_language(header);
        assert_eq!(best("fr-FR,fr;q=0.9,en-US;q=0.8,en;q=0.7"), Some(Language::French));
        assert_eq!(best("en-GB,en;q=0.9,fr;q=0.8"), Some(Language::English));
        assert_eq!(best("de-DE,de;q=0.9,en;q=0.5,fr;q=0.4"), Some(Language::English));
        assert_eq!(best("en;q=0.5, fr;q=0.51"), Some(Language::French));
        assert_eq!(best("FR-ca;Q=0.3,EN;q=0.2"), Some(Language::French));
        // Among equals, the first listed.
        assert_eq!(best("en, fr"), Some(Language::English));
        assert_eq!(best("fr;q=0.8, en;q=0.800"), Some(Language::French));
        // Refused outright, or none the console speaks: the default decides.
        assert_eq!(best("fr;q=0, de"), None);
        assert_eq!(best("*"), None);
        assert_eq!(best("de, *;q=0.5"), None);
        assert_eq!(best(""), None);
        assert_eq!(best("french, english"), None);
    }

    #[test]
    fn malformed_weights_are_skipped_not_guessed() {
        let best = |header| from_accept_language(header);
        assert_eq!(best("fr;q=2, en;q=0.1"), Some(Language::English));
        assert_eq!(best("fr;q=0.1234, en;q=0.1"), Some(Language::English));
        assert_eq!(best("fr;q=-1, en;q=0.1"), Some(Language::English));
        assert_eq!(best("fr;q=, en;q=0.1"), Some(Language::English));
        assert_eq!(best("fr;q=1.0, en;q=0.9"), Some(Language::French));
        assert_eq!(best("fr;q=1.5"), None);
        assert_eq!(quality("0.5"), Some(500));
        assert_eq!(quality("0.05"), Some(50));
        assert_eq!(quality("1"), Some(1000));
        assert_eq!(quality("1.000"), Some(1000));
        assert_eq!(quality("0"), Some(0));
        assert_eq!(quality(".5"), None);
        assert_eq!(quality("0.x"), None);
    }

    #[test]
    fn only_console_pages_are_gone_back_to() {
        assert!(console_address("/console"));
        assert!(console_address("/console/sales?store=a%26b"));
        assert!(console_address("/console?date=2026-03-02"));
        for elsewhere in [
            "//evil.example/console",
            "/consoles",
            "https://evil.example/console",
            "/v1/stores",
            "/console/a b",
            "/console/\u{e9}",
        ] {
            assert!(!console_address(elsewhere), "{elsewhere}");
        }
    }
}
