//! Where a replay writes, in a module of its own: the text and JSON sinks
//! beside it implement it, and should not have to reach back up into the
//! module that gathers them to name it.

use std::io;

use super::event::{Event, Header};
use super::summary::Summary;

/// Where a replay writes what happens.
pub trait Sink {
    fn header(&mut self, header: &Header) -> io::Result<()>;
    fn event(&mut self, event: &Event) -> io::Result<()>;
    fn summary(&mut self, summary: &Summary) -> io::Result<()>;
}

/// Keeps everything in memory (tests, benchmarks).
#[derive(Debug, Default)]
pub struct Recorder {
    pub header: Option<Header>,
    pub events: Vec<Event>,
    pub summary: Option<Summary>,
    /// Keep no events, only the header and summary (benchmarks).
    pub discard_events: bool,
}

impl Sink for Recorder {
    fn header(&mut self, header: &Header) -> io::Result<()> {
        self.header = Some(header.clone());
        Ok(())
    }
    fn event(&mut self, event: &Event) -> io::Result<()> {
        if !self.discard_events {
            self.events.push(event.clone());
        }
        Ok(())
    }
    fn summary(&mut self, summary: &Summary) -> io::Result<()> {
        self.summary = Some(summary.clone());
        Ok(())
    }
}
