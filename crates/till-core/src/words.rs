//! Words of an article's name, as the catalog search matches them: runs of letters and digits,
//! lowercased, with accents and the common ligatures folded out ("Crème Brûlée" is `creme` and
//! `brulee`, "Œuf" is `oeuf`). Folding happens here rather than in SQL so that both engines
//! store and match the same words (SQLite's `lower()` knows ASCII only).

use std::collections::BTreeSet;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longest search text, in characters.
pub const MAX_QUERY_CHARS: usize = 100;

/// `text` lowercased, with accents dropped and ligatures spelled out.
pub fn fold(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
    {
        match c {
            'œ' => folded.push_str("oe"),
            'æ' => folded.push_str("ae"),
            'ß' => folded.push_str("ss"),
            other => folded.push(other),
        }
    }
    folded
}

/// The folded words of `text`, in the order they appear, repeats included.
fn word_list(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The distinct words of an article's name, as the search index keeps them.
pub fn name_words(name: &str) -> BTreeSet<String> {
    word_list(name).into_iter().collect()
}

/// A search by name: every word but the last must be a word of the name, the last the start
/// of one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameQuery {
    /// The words to find whole, each once.
    pub whole: Vec<String>,
    /// The start of a word to find.
    pub prefix: String,
}

/// Why a text is not a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryProblem {
    TooLong,
    NoWord,
}

impl std::fmt::Display for QueryProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryProblem::TooLong => write!(f, "must be at most {MAX_QUERY_CHARS} characters"),
            QueryProblem::NoWord => f.write_str("must hold a word: a letter or a digit"),
        }
    }
}

impl NameQuery {
    pub fn parse(text: &str) -> Result<NameQuery, QueryProblem> {
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(QueryProblem::TooLong);
        }
        let mut words = word_list(text);
        let prefix = words.pop().ok_or(QueryProblem::NoWord)?;
        let mut whole: Vec<String> = Vec::with_capacity(words.len());
        for word in words {
            if !whole.contains(&word) {
                whole.push(word);
            }
        }
        Ok(NameQuery { whole, prefix })
    }

    /// The first text after every word that starts with the prefix: the prefix with its last
    /// character moved to the next one. Words are letters and digits, so that character is
    /// never the last of Unicode.
    pub fn prefix_end(&self) -> String {
        let mut end = self.prefix.clone();
        let last = end.pop().unwrap_or('\0');
        let next = (u32::from(last) + 1..=u32::from(char::MAX))
            .find_map(char::from_u32)
            .unwrap_or(char::MAX);
        end.push(next);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_to_lowercase_words_without_accents() {
        let words: Vec<String> = name_words("Crème Brûlée, 2x CRÈME").into_iter().collect();
        assert_eq!(words, ["2x", "brulee", "creme"]);
        assert_eq!(fold("Œuf ÉTÉ Straße Ｔｅｓｔ"), "oeuf ete strasse test");
        assert!(name_words("— !").is_empty());
    }

    #[test]
    fn a_query_finds_whole_words_then_a_prefix() {
        let query = NameQuery::parse("Crème crème  BRÛ").unwrap();
        assert_eq!(query.whole, ["creme"]);
        assert_eq!(query.prefix, "bru");
        assert_eq!(query.prefix_end(), "brv");
        assert_eq!(NameQuery::parse(" ,; "), Err(QueryProblem::NoWord));
        assert_eq!(NameQuery::parse(&"a".repeat(101)), Err(QueryProblem::TooLong));
        assert!(NameQuery::parse(&"é".repeat(100)).is_ok());
    }

    #[test]
    fn every_word_with_the_prefix_sorts_between_it_and_its_end() {
        let query = NameQuery::parse("caf").unwrap();
        let end = query.prefix_end();
        for word in ["caf", "cafe", "cafz", "caf\u{10ffff}"] {
            assert!(word >= query.prefix.as_str() && word < end.as_str(), "{word}");
        }
        for word in ["cae", "cag", "ca"] {
            assert!(!(word >= query.prefix.as_str() && word < end.as_str()), "{word}");
        }
    }
}
