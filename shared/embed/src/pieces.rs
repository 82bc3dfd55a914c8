//! The Universal Sentence Encoder's tokenizer, in plain Rust: a SentencePiece
//! unigram model (the multilingual v3 one has 128,000 pieces) read from its
//! `.model` file.
//!
//! Text goes through three steps, as in the C++ SentencePiece library:
//! 1. normalize: the model's `nmt_nfkc` rules, stored in the file as a
//!    double-array trie over UTF-8 bytes plus a table of replacements, are
//!    applied longest match first; leading, trailing and repeated spaces go,
//!    a space is put in front, and spaces become `▁` (U+2581);
//! 2. segment: the split into pieces whose scores add up highest (Viterbi over
//!    every piece that matches at every character), a character that no piece
//!    covers becoming the unknown piece;
//! 3. frame: the start and end pieces around the ids.
//!
//! The ids are the C++ SentencePiece library's, with which the model was
//! trained: a run of unknown characters (emoji, mostly) is one unknown
//! piece, text that normalizes to nothing has no piece, and the special
//! pieces (`<unk>`, `<s>`, `</s>`) are never matched by their text. One
//! corner parts from it: scores add up in `f64` (C++: `f32`, whose rounding
//! breaks a few exact ties, as in `)))))))`, and on a long text now and
//! then a near one, the other way). The pure-Python port the weights come
//! with parts from C++ in the other three as well.

use std::collections::VecDeque;

/// The unknown piece's id.
const UNK: u32 = 0;
/// The start piece's id.
const BOS: u32 = 1;
/// The end piece's id.
pub const EOS: u32 = 2;
/// How much lower than the lowest piece an unknown character scores.
const UNK_PENALTY: f64 = 10.0;
/// What a space becomes.
const SPACE_SYMBOL: &[u8] = "\u{2581}".as_bytes();
/// What a byte that starts no valid UTF-8 character becomes.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();
/// A trie node that ends no piece.
const NO_PIECE: u32 = u32::MAX;

/// A SentencePiece model, loaded: its normalizer and its vocabulary.
pub struct Pieces {
    normalizer: Normalizer,
    vocab: Vocab,
}

impl Pieces {
    /// Parses a SentencePiece model's bytes. Err with a short reason for a
    /// file that is not such a model.
    pub fn from_bytes(model: &[u8]) -> Result<Pieces, String> {
        let mut pieces = Vec::new();
        let mut normalizer = None;
        for field in Fields::new(model) {
            match field? {
                (1, Value::Bytes(bytes)) => pieces.push(parse_piece(bytes)?),
                (3, Value::Bytes(bytes)) => normalizer = Some(parse_normalizer(bytes)?),
                (1 | 3, _) => return Err("a model field has the wrong wire type".into()),
                _ => {}
            }
        }
        if pieces.len() <= EOS as usize {
            return Err("fewer than three pieces: not a SentencePiece model".into());
        }
        let normalizer = normalizer.map_or_else(|| Normalizer::new(&[], Flags::default()), Ok)?;
        let vocab = Vocab::new(&pieces)?;
        Ok(Pieces { normalizer, vocab })
    }

    /// The piece ids of `text`, the start piece (1) first and the end piece
    /// (2) last; a run of characters no piece covers is one unknown piece.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text);
        let mut ids = Vec::with_capacity(normalized.len() / 2 + 3);
        ids.push(BOS);
        for id in self.vocab.segment(&normalized) {
            if !(id == UNK && ids.last() == Some(&UNK)) {
                ids.push(id);
            }
        }
        ids.push(EOS);
        ids
    }

    /// How many pieces the vocabulary has.
    #[allow(clippy::len_without_is_empty)] // a loaded model always has pieces
    pub fn len(&self) -> usize {
        self.vocab.scores.len()
    }
}

/// One protobuf field's value.
enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
    Fixed64,
}

/// The fields of one protobuf message, in order, each as (number, value).
struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(data: &'a [u8]) -> Self {
        Fields { data, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.data.get(self.pos).ok_or("truncated varint")?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint too long".into())
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8], String> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .and_then(|end| self.data.get(self.pos..end).map(|bytes| (end, bytes)));
        let (end, bytes) = end.ok_or("truncated field")?;
        self.pos = end;
        Ok(bytes)
    }

    fn field(&mut self) -> Result<(u64, Value<'a>), String> {
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 {
            return Err("field number 0".into());
        }
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => self.take(8).map(|_| Value::Fixed64)?,
            2 => {
                let len = self.varint()?;
                Value::Bytes(self.take(len)?)
            }
            5 => {
                let bytes = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes(word(bytes)))
            }
            wire => return Err(format!("unsupported wire type {wire}")),
        };
        Ok((number, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            self.pos = self.data.len();
        }
        Some(field)
    }
}

/// The first four bytes of `bytes` (zeros past its end) as an array.
fn word(bytes: &[u8]) -> [u8; 4] {
    let mut out = [0u8; 4];
    for (slot, byte) in out.iter_mut().zip(bytes) {
        *slot = *byte;
    }
    out
}

/// One vocabulary entry: its text, its score, and whether text matches
/// it (not for the unknown and control pieces, types 2 and 3).
fn parse_piece(message: &[u8]) -> Result<(&str, f32, bool), String> {
    let mut piece = None;
    let mut score = 0.0f32;
    let mut matched = true;
    for field in Fields::new(message) {
        match field? {
            (1, Value::Bytes(bytes)) => {
                piece = Some(std::str::from_utf8(bytes).map_err(|_| "a piece is not UTF-8")?);
            }
            (2, Value::Fixed32(bits)) => score = f32::from_bits(bits),
            (3, Value::Varint(kind)) => matched = !matches!(kind, 2 | 3),
            (1..=3, _) => return Err("a piece field has the wrong wire type".into()),
            _ => {}
        }
    }
    let piece = piece
        .filter(|piece| !piece.is_empty())
        .ok_or("a piece has no text")?;
    if !score.is_finite() {
        return Err(format!("piece {piece:?} has score {score}"));
    }
    Ok((piece, score, matched))
}

/// The normalizer's rules and switches.
fn parse_normalizer(message: &[u8]) -> Result<Normalizer, String> {
    let mut charsmap: &[u8] = &[];
    let mut flags = Flags::default();
    for field in Fields::new(message) {
        match field? {
            (2, Value::Bytes(bytes)) => charsmap = bytes,
            (3, Value::Varint(on)) => flags.dummy_prefix = on != 0,
            (4, Value::Varint(on)) => flags.remove_extra_spaces = on != 0,
            (5, Value::Varint(on)) => flags.escape_spaces = on != 0,
            (2..=5, _) => return Err("a normalizer field has the wrong wire type".into()),
            _ => {}
        }
    }
    Normalizer::new(charsmap, flags)
}

/// The normalizer's switches (all on unless the model turns them off).
#[derive(Clone, Copy)]
struct Flags {
    dummy_prefix: bool,
    remove_extra_spaces: bool,
    escape_spaces: bool,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            dummy_prefix: true,
            remove_extra_spaces: true,
            escape_spaces: true,
        }
    }
}

/// Rewrites text by the model's rules: a darts-clone double array whose
/// keys are UTF-8 byte strings and whose values are offsets into a block of
/// NUL-terminated replacements.
struct Normalizer {
    units: Vec<u32>,
    replacements: Vec<u8>,
    flags: Flags,
}

/// Where a unit's children start, relative to it.
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

impl Normalizer {
    fn new(charsmap: &[u8], flags: Flags) -> Result<Self, String> {
        let (units, replacements) = if charsmap.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let size = charsmap.get(..4).ok_or("charsmap too short")?;
            let size = u32::from_le_bytes(word(size)) as usize;
            let trie = charsmap
                .get(4..4usize.saturating_add(size))
                .ok_or("charsmap shorter than its trie")?;
            let units = trie
                .chunks_exact(4)
                .map(|unit| u32::from_le_bytes(word(unit)));
            let replacements = charsmap.get(4 + size..).unwrap_or_default();
            (units.collect(), replacements.to_vec())
        };
        Ok(Normalizer {
            units,
            replacements,
            flags,
        })
    }

    /// What the start of `input` becomes, and how many bytes of it that
    /// takes (at least one when `input` is not empty).
    fn prefix<'a>(&'a self, input: &'a [u8]) -> (&'a [u8], usize) {
        let mut longest = None;
        if let Some(&root) = self.units.first() {
            let mut node = offset(root);
            for (i, &byte) in input.iter().enumerate() {
                node ^= usize::from(byte);
                let Some(&unit) = self.units.get(node) else {
                    break;
                };
                if unit & 0x8000_00ff != u32::from(byte) {
                    break;
                }
                node ^= offset(unit);
                if unit & 0x100 != 0 {
                    let Some(&leaf) = self.units.get(node) else {
                        break;
                    };
                    longest = Some((i + 1, (leaf & 0x7fff_ffff) as usize));
                }
            }
        }
        let replaced = longest.and_then(|(len, at)| {
            let rest = self.replacements.get(at..)?;
            let end = rest
                .iter()
                .position(|&byte| byte == 0)
                .unwrap_or(rest.len());
            Some((rest.get(..end)?, len))
        });
        replaced.unwrap_or_else(|| first_char(input))
    }

    /// `text` normalized, spaces escaped: empty when nothing but spaces (or
    /// characters the rules delete) is left.
    fn normalize(&self, text: &str) -> String {
        let Flags {
            dummy_prefix,
            remove_extra_spaces: strip,
            escape_spaces,
        } = self.flags;
        let mut input = text.as_bytes();
        while strip && !input.is_empty() {
            let (out, used) = self.prefix(input);
            if out != b" " {
                break;
            }
            input = input.get(used..).unwrap_or_default();
        }
        if input.is_empty() {
            return String::new();
        }
        let space = if escape_spaces { SPACE_SYMBOL } else { b" " };
        let mut out = Vec::with_capacity(text.len() * 2 + space.len());
        if dummy_prefix {
            out.extend_from_slice(space);
        }
        let mut after_space = strip;
        while !input.is_empty() {
            let (mut piece, used) = self.prefix(input);
            input = input.get(used..).unwrap_or_default();
            if after_space {
                let spaces = piece.iter().take_while(|&&byte| byte == b' ').count();
                piece = piece.get(spaces..).unwrap_or_default();
            }
            if let Some(&last) = piece.last() {
                for &byte in piece {
                    if byte == b' ' {
                        out.extend_from_slice(space);
                    } else {
                        out.push(byte);
                    }
                }
                after_space = strip && last == b' ';
            }
        }
        while strip && out.ends_with(space) {
            out.truncate(out.len() - space.len());
        }
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// The first character of `input` unchanged, or U+FFFD for a byte that
/// starts no valid UTF-8 character (taking that one byte).
fn first_char(input: &[u8]) -> (&[u8], usize) {
    let len = match input.first() {
        None => return (&[], 0),
        Some(byte) if *byte < 0x80 => 1,
        Some(byte) if byte >> 5 == 0b110 => 2,
        Some(byte) if byte >> 4 == 0b1110 => 3,
        Some(byte) if byte >> 3 == 0b1_1110 => 4,
        Some(_) => return (REPLACEMENT, 1),
    };
    match input.get(..len) {
        Some(char) if std::str::from_utf8(char).is_ok() => (char, len),
        _ => (REPLACEMENT, 1),
    }
}

/// The vocabulary: a character trie over the pieces, stored flat with its
/// nodes numbered breadth first (node 0 the root), and each piece's score.
struct Vocab {
    /// Node k's children are nodes `first[k] + 1 ..= first[k + 1]`, in
    /// increasing order of their characters.
    first: Vec<u32>,
    /// The character leading to node k + 1.
    labels: Vec<char>,
    /// The piece node k ends, or `NO_PIECE`.
    ends: Vec<u32>,
    scores: Vec<f32>,
    unk_score: f64,
}

impl Vocab {
    fn new(pieces: &[(&str, f32, bool)]) -> Result<Self, String> {
        let count = u32::try_from(pieces.len()).map_err(|_| "too many pieces")?;
        let mut sorted: Vec<(&str, u32)> = pieces
            .iter()
            .zip(0..count)
            .filter(|((_, _, matched), _)| *matched)
            .map(|(&(piece, _, _), id)| (piece, id))
            .collect();
        sorted.sort_unstable();
        let scores: Vec<f32> = pieces.iter().map(|&(_, score, _)| score).collect();
        let lowest = scores.iter().copied().fold(f32::INFINITY, f32::min);
        let mut vocab = Vocab {
            first: Vec::with_capacity(pieces.len() * 2),
            labels: Vec::with_capacity(pieces.len() * 2),
            ends: Vec::with_capacity(pieces.len() * 2),
            scores,
            unk_score: f64::from(lowest) - UNK_PENALTY,
        };
        // Each node: the run of sorted pieces that start with its path, and
        // that path's length in bytes.
        let mut queue = VecDeque::from([(0, sorted.len(), 0)]);
        while let Some((mut lo, hi, depth)) = queue.pop_front() {
            let first = u32::try_from(vocab.labels.len()).map_err(|_| "too many pieces")?;
            vocab.first.push(first);
            let ends_here = |at: usize| {
                sorted
                    .get(at)
                    .filter(|(piece, _)| at < hi && piece.len() == depth)
            };
            let mut end = NO_PIECE;
            if let Some(&(_, id)) = ends_here(lo) {
                end = id;
                lo += 1;
            }
            if let Some((piece, _)) = ends_here(lo) {
                return Err(format!("piece {piece:?} is there twice"));
            }
            vocab.ends.push(end);
            while lo < hi {
                let rest = |at: usize| sorted.get(at).and_then(|(piece, _)| piece.get(depth..));
                let next = rest(lo)
                    .and_then(|rest| rest.chars().next())
                    .ok_or("bad piece order")?;
                let mut group = lo + 1;
                while group < hi && rest(group).is_some_and(|rest| rest.starts_with(next)) {
                    group += 1;
                }
                vocab.labels.push(next);
                queue.push_back((lo, group, depth + next.len_utf8()));
                lo = group;
            }
        }
        let last = u32::try_from(vocab.labels.len()).map_err(|_| "too many pieces")?;
        vocab.first.push(last);
        Ok(vocab)
    }

    fn child(&self, node: u32, next: char) -> Option<u32> {
        let lo = *self.first.get(node as usize)? as usize;
        let hi = *self.first.get(node as usize + 1)? as usize;
        let at = self.labels.get(lo..hi)?.binary_search(&next).ok()?;
        u32::try_from(lo + at + 1).ok()
    }

    /// The best-scoring split of `text` (normalized) into pieces.
    /// Ties go to the split whose last piece starts earliest, then to the
    /// shorter piece, as in the reference.
    fn segment(&self, text: &str) -> Vec<u32> {
        let chars: Vec<char> = text.chars().collect();
        let n = chars.len();
        // best[j]: the best score of a split of chars[..j], whose last piece
        // is piece[j], starting at from[j].
        let mut best = vec![f64::NEG_INFINITY; n + 1];
        let mut from = vec![0usize; n + 1];
        let mut piece = vec![UNK; n + 1];
        best[0] = 0.0;
        for start in 0..n {
            let base = best[start];
            let mut node = 0u32;
            let mut single = false;
            for (end, &next) in (start + 1..).zip(&chars[start..]) {
                let Some(child) = self.child(node, next) else {
                    break;
                };
                node = child;
                let id = self.ends.get(node as usize).copied().unwrap_or(NO_PIECE);
                let Some(&score) = self.scores.get(id as usize) else {
                    continue;
                };
                single |= end == start + 1;
                let score = base + f64::from(score);
                if score > best[end] {
                    (best[end], from[end], piece[end]) = (score, start, id);
                }
            }
            let score = base + self.unk_score;
            if !single && score > best[start + 1] {
                (best[start + 1], from[start + 1], piece[start + 1]) = (score, start, UNK);
            }
        }
        let mut ids = Vec::new();
        let mut end = n;
        while end > 0 {
            ids.push(piece[end]);
            end = from[end];
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::OnceLock;

    /// The model file: in `$MYAO_USE_DIR`, else where the fetch script
    /// leaves it.
    fn model_bytes() -> Vec<u8> {
        let mut paths = Vec::new();
        if let Some(dir) = std::env::var_os("MYAO_USE_DIR") {
            paths.push(PathBuf::from(dir).join("sp.model"));
        }
        paths.push(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../models/layer/use/sp.model"
        )));
        let found = paths.iter().find_map(|path| std::fs::read(path).ok());
        found.unwrap_or_else(|| panic!("no sp.model at {paths:?}: run infra/fetch-embedder.sh"))
    }

    /// The model, loaded once for all the tests.
    fn model() -> &'static Pieces {
        static MODEL: OnceLock<Pieces> = OnceLock::new();
        MODEL.get_or_init(|| Pieces::from_bytes(&model_bytes()).unwrap())
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A protobuf length-delimited field.
    fn bytes_field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2];
        let mut len = bytes.len();
        while len >= 0x80 {
            out.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
        out.extend_from_slice(bytes);
        out
    }

    /// A model with these pieces (after the three special ones) and this
    /// normalizer message.
    fn tiny_model(pieces: &[(&str, f32)], normalizer: &[u8]) -> Vec<u8> {
        let special = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0)];
        let mut model = Vec::new();
        for (piece, score) in special.iter().chain(pieces) {
            let mut message = bytes_field(1, piece.as_bytes());
            message.push(2 << 3 | 5);
            message.extend_from_slice(&score.to_le_bytes());
            model.extend(bytes_field(1, &message));
        }
        model.extend(bytes_field(3, normalizer));
        model
    }

    /// The real model's normalizer message.
    fn real_normalizer() -> Vec<u8> {
        let bytes = model_bytes();
        let found = Fields::new(&bytes).find_map(|field| match field.unwrap() {
            (3, Value::Bytes(message)) => Some(message.to_vec()),
            _ => None,
        });
        found.unwrap()
    }

    /// A random string mixing ASCII, spaces, CJK, combining marks, control
    /// characters, emoji, U+FFFD and characters the normalizer rewrites.
    fn random_text(rng: &mut Rng) -> String {
        const SPECIAL: &[char] = &[
            ' ',
            ' ',
            '\t',
            '\n',
            '\r',
            '\u{0}',
            '\u{7f}',
            '\u{a0}',
            '\u{200b}',
            '\u{3000}',
            '\u{fffd}',
            '\u{2581}',
            '\u{301}',
            '\u{308}',
            '\u{ff76}',
            '\u{ff9e}',
            '\u{ff21}',
            '\u{2460}',
            '\u{fb01}',
            '\u{1f389}',
            '\u{1f44d}',
            '\u{1f3fd}',
            '\u{fe0f}',
            '<',
            '@',
        ];
        let len = rng.below(40);
        (0..len)
            .map(|_| match rng.below(6) {
                0 => char::from(b' ' + rng.below(95) as u8),
                1 => char::from_u32(0x4e00 + rng.below(0x5200) as u32).unwrap(),
                2 => char::from_u32(0x3040 + rng.below(0xc0) as u32).unwrap(),
                3 => char::from_u32(rng.below(0x3_0000) as u32).unwrap_or('\u{fffd}'),
                _ => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
            })
            .collect()
    }

    const CASES: &[(&str, &[u32])] = &[
        (
            "The quick brown fox jumps over the lazy dog.",
            &[
                1, 76, 7613, 9964, 6, 24506, 7820, 9, 393, 12, 25, 3156, 2042, 8, 2,
            ],
        ),
        (
            "Could you send me the deployment logs from yesterday? Thanks!",
            &[
                1, 14118, 37, 4487, 68, 12, 53849, 5084, 9, 140, 51, 12058, 21, 4007, 42, 2,
            ],
        ),
        (
            "今日は良い天気ですね。明日の会議は何時からですか？",
            &[
                1, 6, 11194, 89, 1962, 405, 1405, 120, 462, 27, 23876, 73, 40934, 7670, 54602, 120,
                217, 21, 2,
            ],
        ),
        (
            "ひらがなとカタカナ、そして漢字",
            &[1, 54625, 66530, 453, 240, 39015, 56125, 24, 19255, 29357, 2],
        ),
        (
            "ｶﾀｶﾅ ＡＢＣ１２３ ｱｲｳｴｵ",
            &[1, 6, 39015, 56125, 13514, 16131, 70848, 52741, 2861, 2],
        ),
        (
            "明日のmeetingでAPIのdesignをreviewしましょう",
            &[
                1, 6, 23876, 73, 92475, 57, 126, 27045, 73, 31619, 153, 43067, 6903, 493, 2,
            ],
        ),
        (
            "   leading, trailing   and   multiple spaces   ",
            &[1, 8585, 7, 26495, 57, 17, 6020, 28742, 2],
        ),
        (
            "tabs\tand\nnewlines\r\nmixed \t\n here",
            &[1, 8868, 9, 17, 484, 26046, 14969, 827, 2],
        ),
        (
            "Great job 🎉🎉 👍🏽 ❤️ 🇯🇵",
            &[1, 6546, 1949, 6, 0, 6, 0, 6, 127967, 14234, 6, 0, 2],
        ),
        ("", &[1, 2]),
        ("     ", &[1, 2]),
        // The special pieces' text is text.
        ("x<s>y</s>", &[1, 257, 1467, 9, 65, 52, 6045, 9, 65, 2]),
        (
            "<@U123ABC> see https://example.com/path?q=1&x=y_z#frag and <https://slack.com|slack>",
            &[
                1, 87, 994, 1241, 16131, 20708, 65, 509, 146, 9, 119, 36678, 8, 149, 38, 11122, 21,
                445, 1674, 461, 118, 94, 52, 77, 246, 1457, 44280, 17, 87, 11075, 119, 9, 34268, 8,
                149, 127992, 9, 34268, 65, 2,
            ],
        ),
        (
            "café naïve résumé Ångström façade",
            &[
                1, 15567, 163, 12747, 344, 6, 81180, 73359, 1426, 53312, 79807, 2,
            ],
        ),
        (
            "안녕하세요, 만나서 반갑습니다.",
            &[
                1, 9726, 0, 7705, 95457, 7, 71059, 3981, 15076, 39798, 34239, 8, 2,
            ],
        ),
        (
            "مرحبا بالعالم، كيف حالك؟",
            &[
                1, 21991, 33916, 668, 2459, 55036, 191, 68472, 79241, 6494, 50654, 2,
            ],
        ),
        (
            "x\u{0}y \u{200b} zero\u{a0}width \u{fffd} ① ㍻ ﬁ",
            &[1, 257, 0, 52, 7697, 16050, 116, 6, 10097, 7950, 2],
        ),
    ];

    #[test]
    fn encode_matches_the_cpp_library() {
        let model = model();
        for (text, ids) in CASES {
            assert_eq!(model.encode(text), *ids, "{text:?}");
        }
    }

    #[test]
    fn the_vocabulary_has_128000_pieces() {
        assert_eq!(model().len(), 128_000);
    }

    #[test]
    fn garbage_is_not_a_model() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        assert!(Pieces::from_bytes(&[]).is_err());
        assert!(Pieces::from_bytes(b"not a sentencepiece model at all").is_err());
        assert!(Pieces::from_bytes(&[0xff; 64]).is_err());
        let tiny = tiny_model(&[("\u{2581}a", -1.0), ("bc", -2.0)], &[]);
        for _ in 0..2000 {
            let mut damaged = tiny.clone();
            let at = rng.below(tiny.len() as u64) as usize;
            damaged[at] = rng.next() as u8;
            if let Ok(pieces) = Pieces::from_bytes(&damaged) {
                let ids = pieces.encode("abc 世界");
                assert_eq!((ids.first(), ids.last()), (Some(&BOS), Some(&EOS)));
            }
        }
        for _ in 0..2000 {
            let len = rng.below(300) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if let Ok(pieces) = Pieces::from_bytes(&bytes) {
                let ids = pieces.encode("hello 世界");
                assert_eq!((ids.first(), ids.last()), (Some(&BOS), Some(&EOS)));
            }
        }
    }

    #[test]
    fn a_truncated_model_never_panics() {
        let bytes = model_bytes();
        for cut in [
            &bytes[..1000],
            &bytes[..bytes.len() - 1],
            &bytes[..bytes.len() / 2],
        ] {
            if let Ok(pieces) = Pieces::from_bytes(cut) {
                let ids = pieces.encode("hello 世界");
                assert_eq!((ids.first(), ids.last()), (Some(&BOS), Some(&EOS)));
            }
        }
        assert!(Pieces::from_bytes(&bytes[..1000]).is_err());
        assert!(Pieces::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn random_text_never_panics() {
        let model = model();
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        for _ in 0..3000 {
            let text = random_text(&mut rng);
            let ids = model.encode(&text);
            assert!(ids.len() >= 2, "{text:?}");
            assert_eq!(
                (ids.first(), ids.last()),
                (Some(&BOS), Some(&EOS)),
                "{text:?}"
            );
            assert!(
                ids.iter().all(|&id| (id as usize) < model.len()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_damaged_charsmap_never_panics() {
        let normalizer = real_normalizer();
        let pieces = [("\u{2581}a", -1.0), ("b", -2.0), ("\u{4e16}", -3.0)];
        let mut rng = Rng(0x5151_5151_5151_5151);
        for round in 0..200 {
            let mut damaged = normalizer.clone();
            for _ in 0..1 + round % 20 {
                let at = 12 + rng.below(damaged.len() as u64 - 12) as usize;
                damaged[at] = rng.next() as u8;
            }
            let Ok(model) = Pieces::from_bytes(&tiny_model(&pieces, &damaged)) else {
                continue;
            };
            for _ in 0..20 {
                let ids = model.encode(&random_text(&mut rng));
                assert_eq!((ids.first(), ids.last()), (Some(&BOS), Some(&EOS)));
            }
        }
    }

    #[test]
    fn a_small_model_splits_by_score() {
        let pieces = [
            ("\u{2581}", -5.0),
            ("a", -1.0),
            ("b", -1.0),
            ("ab", -1.5),
            ("\u{2581}ab", -4.0),
            ("\u{2581}abb", -9.0),
        ];
        let model = Pieces::from_bytes(&tiny_model(&pieces, &[])).unwrap();
        assert_eq!(model.len(), 9);
        // "▁ab" (-4) beats "▁" + "ab" (-6.5); "b" alone is left.
        assert_eq!(model.encode("  abb "), [BOS, 7, 5, EOS]);
        // An unknown character scores 10 below the lowest piece.
        assert_eq!(model.encode("a z"), [BOS, 3, 4, 3, UNK, EOS]);
        // A run of them is one.
        assert_eq!(model.encode("a zzz"), [BOS, 3, 4, 3, UNK, EOS]);
        assert_eq!(model.encode("   "), [BOS, EOS]);
        let twice = tiny_model(&[("a", -1.0), ("a", -2.0)], &[]);
        assert!(Pieces::from_bytes(&twice).is_err());
    }
}
