//! The arithmetic both forward passes share: a matrix product that takes a
//! text's rows at once (so that each weight is read once per text, not once
//! per piece), and layer normalization.

/// `out += x · w` for `rows` rows of `x` at once: `x` is `rows` x `k`,
/// `w` is `k` x `c`, `out` is `rows` x `c`, each row after row. Each row of
/// `w` is read once for all of `x`'s rows.
pub fn mat_mat(x: &[f32], w: &[f32], out: &mut [f32], rows: usize) {
    if rows == 0 {
        return;
    }
    let (k, c) = (x.len() / rows, out.len() / rows);
    for (r, w_row) in w.chunks_exact(c).take(k).enumerate() {
        for (t, o) in out.chunks_exact_mut(c).enumerate() {
            let xr = x[t * k + r];
            if xr != 0.0 {
                o.iter_mut().zip(w_row).for_each(|(o, wv)| *o += xr * wv);
            }
        }
    }
}

/// `out += x · w`, `w` a matrix of `x.len()` rows, row after row: one row
/// of [`mat_mat`].
pub fn vec_mat(x: &[f32], w: &[f32], out: &mut [f32]) {
    mat_mat(x, w, out, 1);
}

/// Normalizes `v` to mean 0 and variance 1, then scales by `g` and adds `b`.
pub fn layer_norm(v: &mut [f32], g: &[f32], b: &[f32], eps: f32) {
    let n = v.len() as f32;
    let mean = v.iter().sum::<f32>() / n;
    v.iter_mut().for_each(|x| *x -= mean);
    let var = v.iter().map(|x| x * x).sum::<f32>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, g), b) in v.iter_mut().zip(g).zip(b) {
        *x = *x * inv * g + b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_times_a_vector() {
        let mut out = vec![1.0, 0.0];
        // [2 3] x [[1 2] [3 4]] = [11 16], plus what was there.
        vec_mat(&[2.0, 3.0], &[1.0, 2.0, 3.0, 4.0], &mut out);
        assert_eq!(out, vec![12.0, 16.0]);
    }

    #[test]
    fn a_matrix_times_a_matrix_row_by_row() {
        // [[1 2] [0 1] [3 0]] x [[1 2] [3 4]] = [[7 10] [3 4] [3 6]].
        let mut out = vec![0.0; 6];
        mat_mat(
            &[1.0, 2.0, 0.0, 1.0, 3.0, 0.0],
            &[1.0, 2.0, 3.0, 4.0],
            &mut out,
            3,
        );
        assert_eq!(out, vec![7.0, 10.0, 3.0, 4.0, 3.0, 6.0]);
        let mut none: Vec<f32> = vec![];
        mat_mat(&[], &[1.0], &mut none, 0);
    }

    #[test]
    fn layer_norm_centres_and_scales() {
        let mut v = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut v, &[1.0; 4], &[0.5; 4], 0.0);
        let mean = v.iter().sum::<f32>() / 4.0;
        assert!((mean - 0.5).abs() < 1e-6);
        let var = v.iter().map(|x| (x - 0.5) * (x - 0.5)).sum::<f32>() / 4.0;
        assert!((var - 1.0).abs() < 1e-5);
    }
}
