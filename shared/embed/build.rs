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
    if target == "x86_64" {
        // Every x86-64 Lambda and any x86-64 CPU since 2015 has AVX2 and
        // FMA; the engine's fast path needs them (arm64 takes its portable
        // path).
        build.flag("-mavx2").flag("-mfma").flag("-mf16c");
    }
    build.compile("e5");
    let model = models.join("layer/e5-small-q4.bin");
    let model = model.canonicalize().unwrap_or(model);
    println!("cargo::rustc-env=MYAO_E5_MODEL={}", model.display());
    println!("cargo::rustc-cfg=myao_e5");
}
