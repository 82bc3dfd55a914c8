//! What a text means, as an embedder saw it: a unit vector (or two side by
//! side, one per model), kept at one byte per dimension (896 bytes for the
//! bundled embedder's two) with the name of the model that made it.
//! Vectors of different models are never compared.

use std::ops::Range;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One dimension's scale: a unit vector's values lie in -1..=1.
const SCALE: f32 = 127.0;

/// A text's meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meaning {
    model: String,
    values: Vec<i8>,
}

impl Meaning {
    /// The meaning `model` gave as `unit` (a unit-length vector).
    pub fn of(model: &str, unit: &[f32]) -> Meaning {
        let values = unit
            .iter()
            .map(|x| (x * SCALE).round().clamp(-SCALE, SCALE) as i8)
            .collect();
        Meaning {
            model: model.to_owned(),
            values,
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// How many bytes it keeps.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The cosine of the two meanings, from -1 to 1; `None` when another
    /// model (or another size) made them, or one is all zeros.
    pub fn likeness(&self, other: &Meaning) -> Option<f64> {
        self.likeness_in(other, 0..self.values.len())
    }

    /// The cosine of the two meanings' dimensions `part` (one model's part
    /// of a vector that holds two side by side); `None` as for
    /// [`Meaning::likeness`], or when `part` is outside them.
    pub fn likeness_in(&self, other: &Meaning, part: Range<usize>) -> Option<f64> {
        if self.model != other.model || self.values.len() != other.values.len() {
            return None;
        }
        let (a, b) = (self.values.get(part.clone())?, other.values.get(part)?);
        let dot = |a: &[i8], b: &[i8]| -> f64 {
            a.iter()
                .zip(b)
                .map(|(x, y)| i64::from(*x) * i64::from(*y))
                .sum::<i64>() as f64
        };
        let norms = (dot(a, a) * dot(b, b)).sqrt();
        (norms > 0.0).then(|| dot(a, b) / norms)
    }
}

/// Stored as `{"model": ..., "v": <base64 of the bytes>}`.
#[derive(Serialize, Deserialize)]
struct Stored {
    model: String,
    v: String,
}

impl Serialize for Meaning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = self.values.iter().map(|v| v.to_ne_bytes()[0]).collect();
        Stored {
            model: self.model.clone(),
            v: STANDARD.encode(bytes),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Meaning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Meaning, D::Error> {
        let stored = Stored::deserialize(d)?;
        let bytes = STANDARD
            .decode(stored.v.as_bytes())
            .map_err(serde::de::Error::custom)?;
        Ok(Meaning {
            model: stored.model,
            values: bytes.into_iter().map(|b| i8::from_ne_bytes([b])).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn likeness_is_the_cosine_within_a_byte_per_dimension() {
        let a = unit(&[0.3, -0.2, 0.9, 0.1]);
        let b = unit(&[0.25, -0.1, 0.8, -0.3]);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let got = Meaning::of("m", &a)
            .likeness(&Meaning::of("m", &b))
            .unwrap();
        assert!((got - f64::from(exact)).abs() < 0.02, "{got} vs {exact}");
        let same = Meaning::of("m", &a)
            .likeness(&Meaning::of("m", &a))
            .unwrap();
        assert!((same - 1.0).abs() < 1e-9);
    }

    #[test]
    fn meanings_of_other_models_or_sizes_are_not_compared() {
        let a = unit(&[1.0, 0.0]);
        assert_eq!(Meaning::of("m", &a).likeness(&Meaning::of("n", &a)), None);
        assert_eq!(
            Meaning::of("m", &a).likeness(&Meaning::of("m", &unit(&[1.0, 0.0, 0.0]))),
            None
        );
        assert_eq!(
            Meaning::of("m", &[0.0, 0.0]).likeness(&Meaning::of("m", &a)),
            None
        );
    }

    #[test]
    fn a_part_is_compared_alone_and_a_part_of_zeros_not_at_all() {
        let a = Meaning::of("m", &[0.6, 0.8, 0.0, 0.0]);
        let b = Meaning::of("m", &[0.6, 0.8, 1.0, 0.0]);
        let c = Meaning::of("m", &[0.8, 0.6, 0.0, 1.0]);
        assert!((a.likeness_in(&b, 0..2).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(a.likeness_in(&b, 2..4), None, "a's part is zeros");
        assert!(b.likeness_in(&c, 2..4).unwrap().abs() < 1e-9);
        assert_eq!(a.likeness_in(&b, 2..9), None);
        let whole = b.likeness(&c).unwrap();
        assert!(whole > 0.4 && whole < 0.6, "{whole}");
    }

    #[test]
    fn a_meaning_is_stored_as_its_model_and_base64_bytes_and_read_back() {
        let m = Meaning::of("e5", &[1.0, -1.0, 0.5, 0.0]);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, r#"{"model":"e5","v":"f4FAAA=="}"#);
        assert_eq!(serde_json::from_str::<Meaning>(&json).unwrap(), m);
        assert!(serde_json::from_str::<Meaning>(r#"{"model":"e5","v":"%%"}"#).is_err());
    }
}
