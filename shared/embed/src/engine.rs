//! The C engine's four calls (`e5.h`), the only unsafe code of the
//! workspace. Built only when the build found the engine (`cfg(myao_e5)`);
//! otherwise loading says so.
#![allow(unsafe_code)]

/// The model's dimensions.
pub const DIMENSIONS: usize = 384;

/// The longest text embedded, in bytes: a fact with its cues, or a
/// recall's five newest messages, fit well within it; a longer text is cut
/// (on a character), which bounds the engine's time on one call.
const MAX_TEXT: usize = 4096;

#[cfg(myao_e5)]
mod c {
    use std::ffi::{c_char, c_int};

    #[repr(C)]
    pub struct E5Model {
        _private: [u8; 0],
    }

    extern "C" {
        pub fn e5_load(path: *const c_char) -> *mut E5Model;
        pub fn e5_free(m: *mut E5Model);
        pub fn e5_dim(m: *const E5Model) -> c_int;
        pub fn e5_embed(
            m: *mut E5Model,
            text: *const c_char,
            is_query: c_int,
            out: *mut f32,
        ) -> c_int;
    }
}

/// A loaded model.
pub struct Model {
    #[cfg(myao_e5)]
    raw: std::ptr::NonNull<c::E5Model>,
}

// The engine's model is used behind a mutex, one call at a time.
#[cfg(myao_e5)]
unsafe impl Send for Model {}

/// The text the engine is given: valid UTF-8 up to `MAX_TEXT` bytes, no NUL.
fn c_text(text: &str) -> std::ffi::CString {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let bytes: Vec<u8> = text[..end].bytes().filter(|b| *b != 0).collect();
    std::ffi::CString::new(bytes).unwrap_or_default()
}

#[cfg(myao_e5)]
impl Model {
    pub fn load(path: &std::path::Path) -> Result<Model, String> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| "a path with a NUL byte".to_owned())?;
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        let raw = unsafe { c::e5_load(path.as_ptr()) };
        let raw = std::ptr::NonNull::new(raw).ok_or("not a model the engine reads")?;
        let model = Model { raw };
        // SAFETY: `raw` is a model the engine loaded and has not freed.
        let dim = unsafe { c::e5_dim(model.raw.as_ptr()) };
        if usize::try_from(dim).ok() != Some(DIMENSIONS) {
            return Err(format!("a model of {dim} dimensions, not {DIMENSIONS}"));
        }
        Ok(model)
    }

    pub fn embed(&self, text: &str, query: bool) -> Result<Vec<f32>, String> {
        let text = c_text(text);
        let mut out = vec![0f32; DIMENSIONS];
        // SAFETY: the model is live and used by one caller at a time (the
        // mutex), `text` is NUL-terminated, and `out` holds `e5_dim` floats.
        let status = unsafe {
            c::e5_embed(
                self.raw.as_ptr(),
                text.as_ptr(),
                i32::from(query),
                out.as_mut_ptr(),
            )
        };
        if status != 0 || out.iter().any(|x| !x.is_finite()) {
            return Err(format!("the engine failed ({status})"));
        }
        Ok(out)
    }
}

#[cfg(myao_e5)]
impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the model was loaded by `e5_load` and is freed once.
        unsafe { c::e5_free(self.raw.as_ptr()) }
    }
}

#[cfg(not(myao_e5))]
impl Model {
    pub fn load(_path: &std::path::Path) -> Result<Model, String> {
        Err("this build has no embedder engine: run infra/fetch-embedder.sh and build again".into())
    }

    pub fn embed(&self, text: &str, _query: bool) -> Result<Vec<f32>, String> {
        let _ = c_text(text);
        Err("this build has no embedder engine".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_given_to_the_engine_is_cut_on_a_character_and_has_no_nul() {
        let long = "あ".repeat(MAX_TEXT);
        let c = c_text(&long);
        assert!(c.as_bytes().len() <= MAX_TEXT);
        assert!(std::str::from_utf8(c.as_bytes()).is_ok());
        assert_eq!(c_text("a\0b").as_bytes(), b"ab");
    }
}
