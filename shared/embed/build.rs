//! Compiles the embedder's C engine when `infra/fetch-embedder.sh` has put
//! it in `models/e5/`, and tells the crate so (`cfg(myao_e5)`) and where the
//! model is (`MYAO_E5_MODEL`: `models/layer/`, the Lambda layer's folder).
//! Without it the crate still builds: the bundled embedder then says it is
//! missing, and recall keeps to keywords.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(myao_e5)");
    let models = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let dir = models.join("e5");
    let source = dir.join("e5.c");
    println!("cargo::rerun-if-changed={}", source.display());
    if !source.is_file() {
        println!("cargo::rustc-env=MYAO_E5_MODEL=");
        return;
    }
    let target = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let mut build = cc::Build::new();
    build
        .file(&source)
        .include(&dir)
        .opt_level(3)
        // Its OpenMP pragmas: one thread per call here (a Lambda function
        // has one or two vCPUs, and calls come one at a time).
        .flag_if_supported("-Wno-unknown-pragmas")
        .warnings(false);
    if target == "x86_64" && avx2_where_it_runs() {
        // The engine's fast path (arm64, and an x86-64 without AVX2, take
        // its portable one).
        build.flag("-mavx2").flag("-mfma").flag("-mf16c");
    }
    build.compile("e5");
    let model = models.join("layer/e5-small-q4.bin");
    let model = model.canonicalize().unwrap_or(model);
    println!("cargo::rustc-env=MYAO_E5_MODEL={}", model.display());
    println!("cargo::rustc-cfg=myao_e5");
}

/// Whether the x86-64 code built here runs where AVX2, FMA and F16C are:
/// for this machine, when it says so (`/proc/cpuinfo`); built for another
/// (an x86-64 Lambda function), yes: every x86-64 Lambda has them.
fn avx2_where_it_runs() -> bool {
    let (host, target) = (std::env::var("HOST"), std::env::var("TARGET"));
    if host.is_err() || host != target {
        return true;
    }
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| {
        info.lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|flags| {
                let has = |f: &str| flags.split_whitespace().any(|x| x == f);
                has("avx2") && has("fma") && has("f16c")
            })
    })
}
