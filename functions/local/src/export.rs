//! Reading a standard Slack workspace export: a folder, or its `.zip`.
//!
//! ```text
//! users.json                 [{"id", "name", "real_name", "profile": {...}, "is_bot"}]
//! channels.json              [{"id", "name", ...}]      (groups.json, mpims.json alike)
//! dms.json                   [{"id", "members"}]        (folders named by id)
//! <channel>/<YYYY-MM-DD>.json  [message, ...]
//! ```
//!
//! Each message is read with the live event parser
//! ([`myao::domain::slack_event::parse_event`]) once its `channel` is set,
//! so subtypes, edits (`message_changed`) and deletions (`message_deleted`)
//! follow exactly the rules of the Events API. A file that is not what it
//! should be is an [`ExportError`] naming it; a message of a subtype the bot
//! ignores is kept as an ignored event, to be skipped and counted.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Days, NaiveDate, Utc};
use chrono_tz::Tz;
use myao::domain::slack_event::{parse_event, SlackEvent};
use myao::domain::{Channel, ChannelId, Ts, User, UserId, Visibility};
use serde_json::Value;

/// The most read of one file in a zip export (64 MiB uncompressed): a day
/// of a busy channel is a few MiB, and a zip bomb stops here.
pub const MAX_ZIP_ENTRY_BYTES: u64 = 64 << 20;

/// A file of the export that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    /// The file, as the user can find it (`export.zip:general/2026-01-05.json`).
    pub file: String,
    pub problem: String,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.problem)
    }
}

impl std::error::Error for ExportError {}

/// One entry of a day file: a message, an edit, a deletion, or something
/// the bot ignores.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub channel: ChannelId,
    /// When it happened: the entry's own `ts` (for an edit, the edit's time).
    pub ts: Ts,
    pub event: SlackEvent,
}

impl Entry {
    /// Reads one entry of `channel` from its JSON, as the live parser would
    /// read it from the Events API. `at` names it in errors.
    pub fn from_json(channel: &ChannelId, mut value: Value, at: &str) -> Result<Entry, String> {
        let Some(object) = value.as_object_mut() else {
            return Err(format!("{at} is not a JSON object"));
        };
        let ts = match object.get("ts").and_then(Value::as_str) {
            Some(ts) => Ts::parse(ts).map_err(|e| format!("{at}: {e}"))?,
            None => return Err(format!("{at} has no \"ts\"")),
        };
        object.insert("channel".to_owned(), Value::String(channel.to_string()));
        if !object.contains_key("type") {
            // Some exporters leave it out; every entry of a day file is a message.
            object.insert("type".to_owned(), Value::String("message".to_owned()));
        }
        let event = parse_event(&value).map_err(|e| format!("{at} (ts {ts}): {e}"))?;
        Ok(Entry {
            channel: channel.clone(),
            ts,
            event,
        })
    }

    /// When it happened.
    pub fn time(&self) -> DateTime<Utc> {
        self.ts.to_datetime()
    }
}

/// A workspace export in memory: who, where, and every entry in time order.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// Where it was read from (for the header of a replay).
    pub source: String,
    pub users: Vec<User>,
    pub channels: Vec<Channel>,
    /// In time order; entries of the same time keep their file order.
    pub entries: Vec<Entry>,
}

impl Export {
    /// An export built in code (tests, benchmarks): the entries are sorted.
    pub fn new(
        source: impl Into<String>,
        users: Vec<User>,
        channels: Vec<Channel>,
        mut entries: Vec<Entry>,
    ) -> Export {
        entries.sort_by_key(|e| e.ts);
        Export {
            source: source.into(),
            users,
            channels,
            entries,
        }
    }
}

/// What to read of an export.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Channel names (with or without `#`) or ids; empty for all.
    pub channels: Vec<String>,
    /// The first and last day to include (inclusive), in `tz`.
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub tz: Option<Tz>,
}

impl Filter {
    fn day_of(&self, at: DateTime<Utc>) -> NaiveDate {
        match self.tz {
            Some(tz) => at.with_timezone(&tz).date_naive(),
            None => at.date_naive(),
        }
    }

    fn keeps_time(&self, at: DateTime<Utc>) -> bool {
        let day = self.day_of(at);
        self.from.is_none_or(|f| day >= f) && self.to.is_none_or(|t| day <= t)
    }

    /// Whether a day file can hold entries in range. Day files are named by
    /// UTC date; a zone moves a day by less than one either way.
    /// At the ends of the calendar (`NaiveDate::MIN`, `MAX`) the margin
    /// has no room and that side keeps everything.
    fn keeps_file_day(&self, day: NaiveDate) -> bool {
        let margin = Days::new(1);
        let after_from = self
            .from
            .and_then(|f| f.checked_sub_days(margin))
            .is_none_or(|f| day >= f);
        let before_to = self
            .to
            .and_then(|t| t.checked_add_days(margin))
            .is_none_or(|t| day <= t);
        after_from && before_to
    }
}

/// Reads all of `reader` if it holds at most `cap` bytes. A zip's
/// directory may lie about sizes: one byte past the cap is read to know,
/// never more.
fn read_capped(reader: impl Read, cap: u64, shown: &str) -> Result<Vec<u8>, ExportError> {
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ExportError {
            file: shown.to_owned(),
            problem: format!("cannot read: {e}"),
        })?;
    if bytes.len() as u64 > cap {
        return Err(ExportError {
            file: shown.to_owned(),
            problem: format!(
                "more than {} uncompressed, far more than a day of a channel; not read",
                size(cap)
            ),
        });
    }
    Ok(bytes)
}

/// `64 MiB`, `512 bytes`.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// The files of an export, in a folder or a zip.
enum Files {
    Dir(PathBuf),
    Zip {
        path: String,
        archive: zip::ZipArchive<File>,
        /// The folder inside the zip that holds `channels.json` (often empty).
        prefix: String,
    },
}

impl Files {
    fn open(path: &Path) -> Result<Files, ExportError> {
        let shown = path.display().to_string();
        let err = |problem: String| ExportError {
            file: shown.clone(),
            problem,
        };
        if path.is_dir() {
            return Ok(Files::Dir(path.to_path_buf()));
        }
        if !path.exists() {
            return Err(err("no such file or folder".to_owned()));
        }
        let file = File::open(path).map_err(|e| err(format!("cannot open: {e}")))?;
        let archive = zip::ZipArchive::new(file).map_err(|e| {
            err(format!(
                "neither a folder nor a readable zip archive of an export ({e})"
            ))
        })?;
        let prefix = archive
            .file_names()
            .filter(|n| *n == "channels.json" || n.ends_with("/channels.json"))
            .min_by_key(|n| n.len())
            .map(|n| n.trim_end_matches("channels.json").to_owned())
            .unwrap_or_default();
        Ok(Files::Zip {
            path: shown,
            archive,
            prefix,
        })
    }

    /// How the user finds `rel` (a path inside the export, `/`-separated).
    fn shown(&self, rel: &str) -> String {
        match self {
            Files::Dir(root) => root.join(rel).display().to_string(),
            Files::Zip { path, prefix, .. } => format!("{path}:{prefix}{rel}"),
        }
    }

    /// The contents of `rel`, `None` when it does not exist.
    fn read(&mut self, rel: &str) -> Result<Option<Vec<u8>>, ExportError> {
        let shown = self.shown(rel);
        let err = |e: std::io::Error| ExportError {
            file: shown.clone(),
            problem: format!("cannot read: {e}"),
        };
        match self {
            Files::Dir(root) => {
                let path = root.join(rel);
                if !path.is_file() {
                    return Ok(None);
                }
                std::fs::read(&path).map(Some).map_err(err)
            }
            Files::Zip {
                archive, prefix, ..
            } => {
                let name = format!("{prefix}{rel}");
                let mut file = match archive.by_name(&name) {
                    Ok(f) => f,
                    Err(zip::result::ZipError::FileNotFound) => return Ok(None),
                    Err(e) => return Err(err(std::io::Error::other(e))),
                };
                read_capped(&mut file, MAX_ZIP_ENTRY_BYTES, &shown).map(Some)
            }
        }
    }

    /// The names of the files directly in folder `dir`, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, ExportError> {
        match self {
            Files::Dir(root) => {
                let path = root.join(dir);
                if !path.is_dir() {
                    return Ok(Vec::new());
                }
                let entries = std::fs::read_dir(&path).map_err(|e| ExportError {
                    file: path.display().to_string(),
                    problem: format!("cannot list: {e}"),
                })?;
                let mut names: Vec<String> = entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().is_file())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect();
                names.sort();
                Ok(names)
            }
            Files::Zip {
                archive, prefix, ..
            } => {
                let folder = format!("{prefix}{dir}/");
                let names: BTreeSet<String> = archive
                    .file_names()
                    .filter_map(|n| n.strip_prefix(folder.as_str()))
                    .filter(|n| !n.is_empty() && !n.contains('/'))
                    .map(str::to_owned)
                    .collect();
                Ok(names.into_iter().collect())
            }
        }
    }
}

/// Reads a JSON file that must hold an array of objects.
fn read_array(
    files: &mut Files,
    rel: &str,
    required: bool,
) -> Result<Option<Vec<Value>>, ExportError> {
    let shown = files.shown(rel);
    let Some(bytes) = files.read(rel)? else {
        if required {
            return Err(ExportError {
                file: shown,
                problem: "missing: a Slack export has one at its top".to_owned(),
            });
        }
        return Ok(None);
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| ExportError {
        file: shown.clone(),
        problem: format!("not valid JSON: {e}"),
    })?;
    match value {
        Value::Array(items) => Ok(Some(items)),
        other => Err(ExportError {
            file: shown,
            problem: format!("expected a JSON array, found {}", kind_of(&other)),
        }),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The name people see, by the same preference as `users.info` in the
/// Slack adapter: display name, real name (profile's, then the user's), handle.
fn display_name(user: &Value) -> Option<String> {
    [
        "/profile/display_name",
        "/profile/real_name",
        "/real_name",
        "/name",
    ]
    .iter()
    .filter_map(|p| user.pointer(p).and_then(Value::as_str).map(str::trim))
    .find(|n| !n.is_empty())
    .map(str::to_owned)
}

fn users(files: &mut Files) -> Result<Vec<User>, ExportError> {
    let shown = files.shown("users.json");
    let items = read_array(files, "users.json", true)?.unwrap_or_default();
    let mut users = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let bad = |problem: String| ExportError {
            file: shown.clone(),
            problem: format!("user {i}: {problem}"),
        };
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"id\"".to_owned()))?;
        let id = UserId::parse(id).map_err(|e| bad(e.to_string()))?;
        let is_bot = item.get("is_bot").and_then(Value::as_bool).unwrap_or(false);
        users.push(User {
            name: display_name(item).unwrap_or_else(|| id.to_string()),
            id,
            is_bot,
        });
    }
    Ok(users)
}

/// The channels of one list file, each with the folder of its messages;
/// `visibility` is who can read the channels that file lists.
fn channel_list(
    files: &mut Files,
    rel: &str,
    required: bool,
    named: bool,
    visibility: Visibility,
) -> Result<Vec<(Channel, String)>, ExportError> {
    let shown = files.shown(rel);
    let Some(items) = read_array(files, rel, required)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let bad = |problem: String| ExportError {
            file: shown.clone(),
            problem: format!("channel {i}: {problem}"),
        };
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"id\"".to_owned()))?;
        let id = ChannelId::parse(id).map_err(|e| bad(e.to_string()))?;
        let name = if named {
            item.get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| bad("no \"name\"".to_owned()))?
                .to_owned()
        } else {
            id.to_string()
        };
        if name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(bad(format!("the name {name:?} is not a folder name")));
        }
        // Slack Connect channels say so; otherwise the file tells.
        let external = ["is_ext_shared", "is_pending_ext_shared"]
            .iter()
            .any(|f| item.get(*f).and_then(Value::as_bool).unwrap_or(false));
        let visibility = if external {
            visibility.shared_externally()
        } else {
            visibility
        };
        out.push((
            Channel {
                id,
                name: name.clone(),
                visibility,
            },
            name,
        ));
    }
    Ok(out)
}

/// Reads the export at `path` (a folder or a `.zip`), keeping what `filter` asks for.
pub fn read(path: &Path, filter: &Filter) -> Result<Export, ExportError> {
    let mut files = Files::open(path)?;
    let users = users(&mut files)?;
    // Public channels, private ones, group DMs and DMs each have their file.
    let mut channels = channel_list(&mut files, "channels.json", true, true, Visibility::PUBLIC)?;
    channels.extend(channel_list(
        &mut files,
        "groups.json",
        false,
        true,
        Visibility::PRIVATE,
    )?);
    channels.extend(channel_list(
        &mut files,
        "mpims.json",
        false,
        true,
        Visibility::DIRECT,
    )?);
    channels.extend(channel_list(
        &mut files,
        "dms.json",
        false,
        false,
        Visibility::DIRECT,
    )?);

    if !filter.channels.is_empty() {
        let wanted: Vec<&str> = filter
            .channels
            .iter()
            .map(|c| c.trim_start_matches('#'))
            .collect();
        for w in &wanted {
            if !channels
                .iter()
                .any(|(c, _)| c.name == *w || c.id.as_str() == *w)
            {
                let known: Vec<&str> = channels.iter().map(|(c, _)| c.name.as_str()).collect();
                return Err(ExportError {
                    file: files.shown("channels.json"),
                    problem: format!(
                        "no channel named {w:?} (the export has: {})",
                        known.join(", ")
                    ),
                });
            }
        }
        channels.retain(|(c, _)| wanted.iter().any(|w| c.name == *w || c.id.as_str() == *w));
    }

    let mut entries = Vec::new();
    for (channel, folder) in &channels {
        for name in files.list(folder)? {
            let Some(day) = name
                .strip_suffix(".json")
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            else {
                continue; // not a day file
            };
            if !filter.keeps_file_day(day) {
                continue;
            }
            let rel = format!("{folder}/{name}");
            let shown = files.shown(&rel);
            let items = read_array(&mut files, &rel, true)?.unwrap_or_default();
            for (i, item) in items.into_iter().enumerate() {
                let entry = Entry::from_json(&channel.id, item, &format!("message {i}")).map_err(
                    |problem| ExportError {
                        file: shown.clone(),
                        problem,
                    },
                )?;
                if filter.keeps_time(entry.time()) {
                    entries.push(entry);
                }
            }
        }
    }
    Ok(Export::new(
        path.display().to_string(),
        users,
        channels.into_iter().map(|(c, _)| c).collect(),
        entries,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_one_byte_past_the_cap_and_names_the_file() {
        let shown = "export.zip:general/2026-01-05.json";
        assert_eq!(read_capped(&b"[1234]"[..], 6, shown).unwrap(), b"[1234]");
        let e = read_capped(&b"[12345]"[..], 6, shown).unwrap_err();
        assert_eq!(e.file, shown);
        assert!(e.to_string().contains("more than 6 bytes"), "{e}");
        // An endless entry is not read to its end.
        let e = read_capped(std::io::repeat(b' '), 1 << 20, shown).unwrap_err();
        assert!(e.to_string().contains("more than 1 MiB"), "{e}");
    }

    #[test]
    fn dates_at_the_ends_of_the_calendar_filter_without_overflow() {
        let day = NaiveDate::from_ymd_opt(2026, 1, 5).unwrap();
        let ends = Filter {
            from: Some(NaiveDate::MIN),
            to: Some(NaiveDate::MAX),
            ..Filter::default()
        };
        assert!(ends.keeps_file_day(day));
        assert!(ends.keeps_file_day(NaiveDate::MIN));
        assert!(ends.keeps_file_day(NaiveDate::MAX));
        assert!(ends.keeps_time(day.and_hms_opt(9, 0, 0).unwrap().and_utc()));
        let after = Filter {
            from: Some(NaiveDate::MAX),
            ..Filter::default()
        };
        assert!(!after.keeps_file_day(day));
        let before = Filter {
            to: Some(NaiveDate::MIN),
            tz: Some(chrono_tz::Asia::Tokyo),
            ..Filter::default()
        };
        assert!(!before.keeps_file_day(day));
        assert!(!before.keeps_time(day.and_hms_opt(9, 0, 0).unwrap().and_utc()));
    }
}
