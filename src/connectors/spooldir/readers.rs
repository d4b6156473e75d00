//! Reading a spooled file item by item, each with its source offset counted as the original counts it:
//! CSV rows by lines read (minus the header), JSON records by index from 0, lines and schemaless JSON
//! records by count from 1.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value as Json;

use super::config::{Charset, CsvSettings, NullIndicator};

/// One item read from a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A CSV row; `None` is a null field.
    Row(Vec<Option<String>>),
    /// A JSON value.
    Json(Json),
    /// A text line without its terminator.
    Line(String),
}

/// An item with where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Read1 {
    pub item: Item,
    /// The source offset stored with the item's record.
    pub offset: i64,
    /// The line of the file the item ends on (from 1), for messages.
    pub line: u64,
}

/// A file that could not be read, at `line`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    pub line: u64,
    pub message: String,
}

/// Reads items from an open file.
pub trait Reader: Send {
    /// The next item, or None at the end of the file.
    fn next(&mut self) -> Result<Option<Read1>, ReadError>;
}

/// Counts the newlines that pass through, so that a JSON record's line is known.
struct LineCounter<R> {
    inner: R,
    newlines: Arc<AtomicU64>,
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let seen = buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
        self.newlines.fetch_add(seen, Ordering::Relaxed);
        Ok(n)
    }
}

/// Reads one line (without its `\n` or `\r\n`) into `buf`; false at the end of the file.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    if reader.read_until(b'\n', buf)? == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(true)
}

/// Lines of text (`SpoolDirLineDelimitedSourceConnector`): the offset is the line number.
pub struct Lines {
    reader: BufReader<File>,
    charset: Charset,
    line: u64,
    buf: Vec<u8>,
}

impl Lines {
    pub fn new(file: File, charset: Charset, buffer: usize) -> Lines {
        Lines {
            reader: BufReader::with_capacity(buffer, file),
            charset,
            line: 0,
            buf: Vec::new(),
        }
    }
}

impl Reader for Lines {
    fn next(&mut self) -> Result<Option<Read1>, ReadError> {
        let line = self.line + 1;
        let fail = |message: String| ReadError { line, message };
        if !read_line(&mut self.reader, &mut self.buf).map_err(|e| fail(e.to_string()))? {
            return Ok(None);
        }
        self.line = line;
        let text = self.charset.decode(&self.buf).map_err(|e| fail(e.0))?;
        Ok(Some(Read1 {
            item: Item::Line(text),
            offset: line as i64,
            line,
        }))
    }
}

/// Whitespace-separated JSON values (`SpoolDirJsonSourceConnector` counts from 0,
/// `SpoolDirSchemaLessJsonSourceConnector` from 1).
pub struct JsonValues {
    stream: serde_json::StreamDeserializer<
        'static,
        serde_json::de::IoRead<LineCounter<BufReader<File>>>,
        Json,
    >,
    newlines: Arc<AtomicU64>,
    count: i64,
    first_offset: i64,
}

impl JsonValues {
    pub fn new(file: File, buffer: usize, first_offset: i64) -> JsonValues {
        let newlines = Arc::new(AtomicU64::new(0));
        let counter = LineCounter {
            inner: BufReader::with_capacity(buffer, file),
            newlines: newlines.clone(),
        };
        JsonValues {
            stream: serde_json::Deserializer::from_reader(counter).into_iter(),
            newlines,
            count: 0,
            first_offset,
        }
    }
}

impl Reader for JsonValues {
    fn next(&mut self) -> Result<Option<Read1>, ReadError> {
        match self.stream.next() {
            None => Ok(None),
            Some(Err(e)) => Err(ReadError {
                line: e.line() as u64,
                message: e.to_string(),
            }),
            Some(Ok(value)) => {
                let offset = self.first_offset + self.count;
                self.count += 1;
                // serde_json reads byte by byte, at most one byte past the value's end.
                let line = self.newlines.load(Ordering::Relaxed) + 1;
                Ok(Some(Read1 {
                    item: Item::Json(value),
                    offset,
                    line,
                }))
            }
        }
    }
}

/// CSV rows (`SpoolDirCsvSourceConnector`) through the `csv` crate.
pub struct CsvRows {
    reader: csv::Reader<BufReader<File>>,
    charset: Charset,
    null_indicator: NullIndicator,
    skipped: u64,
    header_lines: i64,
    offset: i64,
    record: csv::ByteRecord,
}

impl CsvRows {
    /// Opens a CSV file: skips `csv.skip.lines` lines, then reads rows.
    pub fn new(
        file: File,
        settings: &CsvSettings,
        charset: Charset,
        buffer: usize,
    ) -> Result<CsvRows, ReadError> {
        let mut reader = BufReader::with_capacity(buffer, file);
        let mut buf = Vec::new();
        let mut skipped = 0;
        for _ in 0..settings.skip_lines {
            let more = read_line(&mut reader, &mut buf).map_err(|e| ReadError {
                line: skipped + 1,
                message: e.to_string(),
            })?;
            if !more {
                break;
            }
            skipped += 1;
        }
        let reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(settings.separator)
            .quote(settings.quote)
            .quoting(!settings.ignore_quotations && settings.quote != 0)
            .escape(settings.escape)
            .double_quote(true)
            .from_reader(reader);
        Ok(CsvRows {
            reader,
            charset,
            null_indicator: settings.null_indicator,
            skipped,
            header_lines: 0,
            offset: 0,
            record: csv::ByteRecord::new(),
        })
    }

    /// Reads the header row: its fields, not counted in the offsets (the original subtracts one line).
    pub fn header(&mut self) -> Result<Option<Vec<String>>, ReadError> {
        let row = self.next()?;
        self.header_lines = 1;
        self.offset = 0;
        Ok(row.map(|r| match r.item {
            Item::Row(fields) => fields.into_iter().map(Option::unwrap_or_default).collect(),
            _ => Vec::new(),
        }))
    }
}

impl Reader for CsvRows {
    fn next(&mut self) -> Result<Option<Read1>, ReadError> {
        let at = self.reader.position().line() + self.skipped;
        let more = self
            .reader
            .read_byte_record(&mut self.record)
            .map_err(|e| ReadError {
                line: e.position().map_or(at, |p| p.line() + self.skipped),
                message: e.to_string(),
            })?;
        if !more {
            return Ok(None);
        }
        let start = self
            .record
            .position()
            .map_or(at, |p| p.line() + self.skipped);
        // Lines read so far: the line the reader stands on, less one unless the file ended without a
        // line break (then the last line counts too).
        let lines_read =
            (self.reader.position().line() as i64 - 1).max(self.offset + self.header_lines + 1);
        self.offset = lines_read - self.header_lines;
        let mut fields = Vec::with_capacity(self.record.len());
        for raw in self.record.iter() {
            if raw.is_empty() && self.null_indicator == NullIndicator::Empty {
                fields.push(None);
                continue;
            }
            let text = self.charset.decode(raw).map_err(|message| ReadError {
                line: start,
                message: message.0,
            })?;
            fields.push(Some(text));
        }
        Ok(Some(Read1 {
            item: Item::Row(fields),
            offset: self.offset,
            line: start,
        }))
    }
}
