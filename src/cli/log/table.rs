//! Plain-text tables: left-aligned columns two spaces apart, with an optional ANSI colour per cell
//! (added after padding, so colour never shifts a column).

/// A cell's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Colour {
    None,
    Green,
    Yellow,
    Red,
}

impl Colour {
    fn code(self) -> Option<&'static str> {
        match self {
            Colour::None => None,
            Colour::Green => Some("32"),
            Colour::Yellow => Some("33"),
            Colour::Red => Some("31"),
        }
    }
}

/// A table: a header row and rows of cells with their colours.
#[derive(Debug, Default)]
pub(super) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<(String, Colour)>>,
}

impl Table {
    pub(super) fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(super) fn row(&mut self, cells: Vec<(String, Colour)>) {
        self.rows.push(cells);
    }

    /// The lines of the table; colours only when `colour`.
    pub(super) fn render(&self, colour: bool) -> Vec<String> {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, (text, _)) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(text.chars().count());
            }
        }
        let line = |cells: Vec<(&str, Colour)>| {
            let last = cells.len().saturating_sub(1);
            let mut out = String::new();
            for (i, (text, c)) in cells.into_iter().enumerate() {
                let pad = if i == last {
                    0
                } else {
                    widths[i] - text.chars().count() + 2
                };
                match c.code().filter(|_| colour) {
                    Some(code) => out.push_str(&format!("\x1b[{code}m{text}\x1b[0m")),
                    None => out.push_str(text),
                }
                out.push_str(&" ".repeat(pad));
            }
            out.trim_end().to_string()
        };
        let mut lines = vec![line(
            self.header
                .iter()
                .map(|h| (h.as_str(), Colour::None))
                .collect(),
        )];
        for row in &self.rows {
            lines.push(line(
                row.iter()
                    .take(columns)
                    .map(|(t, c)| (t.as_str(), *c))
                    .collect(),
            ));
        }
        lines
    }
}

/// A timestamp in epoch milliseconds as UTC `YYYY-MM-DD HH:MM:SS.mmm`, `-` when absent.
pub(super) fn time(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "-".to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S%.3f").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_colour_only_when_asked() {
        let mut t = Table::new(&["NAME", "STATE"]);
        t.row(vec![
            ("a-long-name".into(), Colour::None),
            ("RUNNING".into(), Colour::Green),
        ]);
        t.row(vec![
            ("b".into(), Colour::None),
            ("FAILED".into(), Colour::Red),
        ]);
        assert_eq!(
            t.render(false),
            vec![
                "NAME         STATE",
                "a-long-name  RUNNING",
                "b            FAILED"
            ]
        );
        let coloured = t.render(true);
        assert_eq!(coloured[2], "b            \x1b[31mFAILED\x1b[0m");
        assert_eq!(time(Some(0)), "1970-01-01 00:00:00.000");
        assert_eq!(time(None), "-");
    }
}
