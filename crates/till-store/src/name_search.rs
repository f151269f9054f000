//! The search by words of a name, shared by the catalog (`sku_words`) and the customer
//! directory (`customer_words`): a table of each distinct folded word of a name, keyed
//! `(word, id)`, with all of that name's words beside it on the same row.
//!
//! A search seeks its words in the key and reads a page in that order, from just after the
//! `(word, id)` the previous page ended on: a page costs the same however many names the words
//! match. With one word, the words starting with it are one range of the key, and a name is
//! listed at the first of its words in that range only (a name whose two words share the
//! prefix appears once). With several, the page follows the names carrying the longest whole
//! word, by id, each checked for the other words and the prefix in the name's words held on
//! the same row: no other row is read to check them.
//!
//! The name's words are kept sorted, each between spaces (` chocolat noir `), so that a word is
//! found by `LIKE '% word %'`, a prefix by `LIKE '% pre%'` (words hold letters and digits only,
//! never a wildcard), and the first word with a prefix is where the prefix first occurs.

use std::collections::BTreeSet;
use till_core::words::NameQuery;

/// The conditions on the words table `w` (its id column `id_column`) that find `search`'s
/// names from just after `after` (a previous page's last word and id), each value given to
/// `bind`, which answers its placeholder. The page reads them ordered by `w.word, w.{id_column}`.
pub(crate) fn conditions(
    search: &NameQuery,
    after: Option<(&str, &str)>,
    id_column: &str,
    bind: &mut dyn FnMut(String) -> String,
) -> Vec<String> {
    let mut conditions = Vec::new();
    match search.whole.iter().max_by_key(|word| word.len()) {
        None => {
            let (start, end) = (bind(search.prefix.clone()), bind(search.prefix_end()));
            // A later page seeks its key, which is within the prefix's range.
            match after {
                Some((word, id)) => {
                    let (word, id) = (bind(word.to_owned()), bind(id.to_owned()));
                    conditions.push(format!("(w.word, w.{id_column}) > ({word}, {id}) AND w.word < {end}"));
                }
                None => conditions.push(format!("w.word >= {start} AND w.word < {end}")),
            }
            // The name's first word with the prefix lists it; its others do not.
            let prefix = bind(format!(" {}", search.prefix));
            conditions.push(format!(
                "instr(w.words, {prefix}) = instr(w.words, ' ' || w.word || ' ')"
            ));
        }
        Some(driving) => {
            conditions.push(format!("w.word = {}", bind(driving.clone())));
            // The key of a later page holds the same word (the cursor is bound to its search).
            if let Some((_, id)) = after {
                conditions.push(format!("w.{id_column} > {}", bind(id.to_owned())));
            }
            for word in search.whole.iter().filter(|word| *word != driving) {
                conditions.push(format!("w.words LIKE {}", bind(format!("% {word} %"))));
            }
            conditions.push(format!("w.words LIKE {}", bind(format!("% {}%", search.prefix))));
        }
    }
    conditions
}

/// A name's words as the search reads them beside each: sorted, each between spaces.
pub(crate) fn spaced(words: &BTreeSet<String>) -> String {
    let mut spaced = String::from(" ");
    for word in words {
        spaced.push_str(word);
        spaced.push(' ');
    }
    spaced
}
