//! The benchmark data shapes (docs/workloads.md): row `i` of each, as a row
//! key and its cells.

use crate::row::GeneratedRow;
use crate::{fnv, push_decimal, push_padded, text_into, ycsb_key_into};
use std::fmt;

/// A benchmark data shape (see the crate docs and docs/workloads.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Access logs: `ycsb_key(i)`, 9 cells `c0`..`c8` of 10–19 bytes.
    Log9,
    /// GPS trajectories: `plate minute`, 60 cells `0`..`59` of `"lon lat"`.
    Gps60,
    /// Vehicle pass records: `plate event-time`, 15 named fields.
    Vehicle15,
    /// Random key-value writes: a 20-digit key, one cell `v` of `value_size`.
    Kv { value_size: usize },
    /// 53 fields of a 751-byte record, one cell each (`q0`..`q52`).
    Wide53,
    /// The same 751-byte record in one cell (`row`).
    Single53,
    /// YCSB's core workloads' records: `field0`.. of `field_length` bytes.
    Ycsb {
        field_count: usize,
        field_length: usize,
    },
}

/// Qualifiers of `vehicle15`, in order.
pub const VEHICLE15_QUALIFIERS: [&str; 15] = [
    "plate",
    "id",
    "camera",
    "lane",
    "dir",
    "type",
    "color",
    "speed_flag",
    "status",
    "time",
    "event",
    "officer",
    "f12",
    "f13",
    "f14",
];

/// Default value size of `kv` when none is given.
pub const KV_DEFAULT_VALUE_SIZE: usize = 100;
/// YCSB's default `fieldcount`.
pub const YCSB_DEFAULT_FIELD_COUNT: usize = 10;
/// YCSB's default `fieldlength`.
pub const YCSB_DEFAULT_FIELD_LENGTH: usize = 100;
/// Bytes of the `wide53`/`single53` record.
pub const RECORD53_LEN: usize = 751;
/// Length of the `wide53`/`single53` row key.
pub const ROW53_LEN: usize = 64;

impl Shape {
    /// Every shape name [`Shape::parse`] accepts.
    pub const NAMES: [&'static str; 7] = [
        "log9",
        "gps60",
        "vehicle15",
        "kv",
        "wide53",
        "single53",
        "ycsb",
    ];

    /// A shape by name. `value_size` is the `kv` value size (default
    /// 100; `kv1000` style names also work) or the `ycsb` field length
    /// (default 100); the other shapes have fixed sizes and refuse it.
    pub fn parse(name: &str, value_size: Option<usize>) -> Result<Shape, String> {
        let lower = name.trim().to_ascii_lowercase();
        let fixed = |shape: Shape| match value_size {
            None => Ok(shape),
            Some(_) => Err(format!(
                "shape '{lower}' has fixed value sizes; a value size only applies to kv and ycsb"
            )),
        };
        match lower.as_str() {
            "log9" => fixed(Shape::Log9),
            "gps60" => fixed(Shape::Gps60),
            "vehicle15" => fixed(Shape::Vehicle15),
            "wide53" => fixed(Shape::Wide53),
            "single53" => fixed(Shape::Single53),
            "kv" => Ok(Shape::Kv {
                value_size: value_size.unwrap_or(KV_DEFAULT_VALUE_SIZE),
            }),
            "ycsb" => Ok(Shape::Ycsb {
                field_count: YCSB_DEFAULT_FIELD_COUNT,
                field_length: value_size.unwrap_or(YCSB_DEFAULT_FIELD_LENGTH),
            }),
            other => {
                if let Some(size) = other
                    .strip_prefix("kv")
                    .and_then(|s| s.parse::<usize>().ok())
                {
                    if value_size.is_some_and(|v| v != size) {
                        return Err(format!(
                            "shape '{other}' names value size {size}, but {value_size:?} was also given"
                        ));
                    }
                    return Ok(Shape::Kv { value_size: size });
                }
                Err(format!(
                    "unknown shape '{name}'; valid shapes: {}",
                    Shape::NAMES.join(", ")
                ))
            }
        }
    }

    /// The shape's name (without its size parameters; see `Display`).
    pub fn name(&self) -> &'static str {
        match self {
            Shape::Log9 => "log9",
            Shape::Gps60 => "gps60",
            Shape::Vehicle15 => "vehicle15",
            Shape::Kv { .. } => "kv",
            Shape::Wide53 => "wide53",
            Shape::Single53 => "single53",
            Shape::Ycsb { .. } => "ycsb",
        }
    }

    /// The column family every cell goes to.
    pub fn family(&self) -> &'static [u8] {
        b"f"
    }

    /// Cells in every row.
    pub fn cells_per_row(&self) -> usize {
        match self {
            Shape::Log9 => 9,
            Shape::Gps60 => 60,
            Shape::Vehicle15 => 15,
            Shape::Kv { .. } | Shape::Single53 => 1,
            Shape::Wide53 => 53,
            Shape::Ycsb { field_count, .. } => *field_count,
        }
    }

    /// Row `i`.
    pub fn row(&self, i: u64) -> GeneratedRow {
        let mut out = GeneratedRow::default();
        self.fill_row(i, &mut out);
        out
    }

    /// Writes row `i`'s key (only) into `out`: what readers need, without
    /// generating the row's values.
    pub fn fill_key(&self, i: u64, out: &mut Vec<u8>) {
        out.clear();
        match *self {
            Shape::Kv { .. } => push_padded(out, fnv(i), 20),
            Shape::Log9 | Shape::Ycsb { .. } => ycsb_key_into(i, out),
            Shape::Gps60 | Shape::Vehicle15 | Shape::Wide53 | Shape::Single53 => {
                let mut row = GeneratedRow::default();
                self.fill_row(i, &mut row);
                *out = row.row;
            }
        }
    }

    /// Writes row `i` into `out`, reusing its buffers.
    pub fn fill_row(&self, i: u64, out: &mut GeneratedRow) {
        out.clear();
        match *self {
            Shape::Log9 => log9(i, out),
            Shape::Gps60 => gps60(i, out),
            Shape::Vehicle15 => vehicle15(i, out),
            Shape::Kv { value_size } => {
                let h = fnv(i);
                // fnv(i) < 2^64 < 10^20: `% 10^20` changes nothing.
                push_padded(&mut out.row, h, 20);
                out.add_cell(|q, v| {
                    q.push(b'v');
                    text_into(h, value_size, v);
                });
            }
            Shape::Wide53 | Shape::Single53 => record53(*self == Shape::Wide53, i, out),
            Shape::Ycsb {
                field_count,
                field_length,
            } => {
                ycsb_key_into(i, &mut out.row);
                for j in 0..field_count {
                    out.add_cell(|q, v| {
                        q.extend_from_slice(b"field");
                        push_decimal(q, j as u64);
                        let seed = fnv(i.wrapping_mul(field_count as u64).wrapping_add(j as u64));
                        text_into(seed, field_length, v);
                    });
                }
            }
        }
    }
}

impl fmt::Display for Shape {
    /// The name, with the size parameters when they are not the defaults:
    /// `kv1000`, `ycsb(20x50)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Shape::Kv { value_size } => write!(f, "kv{value_size}"),
            Shape::Ycsb {
                field_count,
                field_length,
            } if field_count != YCSB_DEFAULT_FIELD_COUNT
                || field_length != YCSB_DEFAULT_FIELD_LENGTH =>
            {
                write!(f, "ycsb({field_count}x{field_length})")
            }
            _ => f.write_str(self.name()),
        }
    }
}

fn log9(i: u64, out: &mut GeneratedRow) {
    ycsb_key_into(i, &mut out.row);
    for j in 0..9u64 {
        out.add_cell(|q, v| {
            q.push(b'c');
            push_decimal(q, j);
            let h = fnv(i.wrapping_mul(9).wrapping_add(j));
            text_into(h, 10 + (h % 10) as usize, v);
        });
    }
}

/// `京` + two letters + five digits, from `h`.
fn push_plate(out: &mut Vec<u8>, h: u64) {
    out.extend_from_slice("京".as_bytes());
    out.push(b'A' + (h % 26) as u8);
    out.push(b'A' + ((h >> 8) % 26) as u8);
    push_padded(out, (h >> 16) % 100_000, 5);
}

fn gps60(i: u64, out: &mut GeneratedRow) {
    push_plate(&mut out.row, fnv(i / 1440));
    out.row.extend_from_slice(b" 2016-01-23 ");
    let minute = i % 1440;
    push_padded(&mut out.row, minute / 60, 2);
    out.row.push(b':');
    push_padded(&mut out.row, minute % 60, 2);
    for j in 0..60u64 {
        out.add_cell(|q, v| {
            push_decimal(q, j);
            let g = fnv(i.wrapping_mul(60).wrapping_add(j));
            // "%.7f %.7f" of 116 + (g % 10^7)/10^7 and 39 + ((g>>32) % 10^7)/10^7.
            v.extend_from_slice(b"116.");
            push_padded(v, g % 10_000_000, 7);
            v.extend_from_slice(b" 39.");
            push_padded(v, (g >> 32) % 10_000_000, 7);
        });
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number since 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Date and time parts of milliseconds since 2016-01-23 00:00:00.000.
struct EventTime {
    year: u64,
    month: u64,
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
    milli: u64,
}

fn event_time(ms_since_base: u64) -> EventTime {
    let base_day = days_from_civil(2016, 1, 23);
    let day_offset = (ms_since_base / 86_400_000) as i64;
    let (year, month, day) = civil_from_days(base_day + day_offset);
    let in_day = ms_since_base % 86_400_000;
    EventTime {
        year: year.max(0) as u64,
        month: u64::from(month),
        day: u64::from(day),
        hour: in_day / 3_600_000,
        minute: in_day / 60_000 % 60,
        second: in_day / 1000 % 60,
        milli: in_day % 1000,
    }
}

fn vehicle15(i: u64, out: &mut GeneratedRow) {
    let h = fnv(i);
    let t = event_time(i.wrapping_mul(10).wrapping_add((h >> 56) % 10));
    let mut plate = Vec::with_capacity(13);
    push_plate(&mut plate, h);
    let mut event = Vec::with_capacity(17);
    push_padded(&mut event, t.year, 4);
    for part in [t.month, t.day, t.hour, t.minute, t.second] {
        push_padded(&mut event, part, 2);
    }
    push_padded(&mut event, t.milli, 3);

    out.row.extend_from_slice(&plate);
    out.row.push(b' ');
    out.row.extend_from_slice(&event);

    for name in VEHICLE15_QUALIFIERS {
        out.add_cell(|q, v| vehicle15_field(name, q, v, (h, &t), (&plate, &event)));
    }
}

/// Field `name` of a `vehicle15` row: `h` is the row's hash, `t` its event
/// time, `plate` and `event` the row key's two parts.
fn vehicle15_field(
    name: &str,
    q: &mut Vec<u8>,
    v: &mut Vec<u8>,
    (h, t): (u64, &EventTime),
    (plate, event): (&[u8], &[u8]),
) {
    q.extend_from_slice(name.as_bytes());
    match name {
        "plate" => v.extend_from_slice(plate),
        "id" => push_decimal(v, 1_000_000_000 + (h >> 3) % 9_000_000_000),
        "camera" => {
            v.extend_from_slice(b"CAM");
            push_padded(v, (h >> 7) % 100_000_000, 8);
        }
        "lane" => push_decimal(v, 1 + (h >> 11) % 4),
        "dir" => push_decimal(v, 1 + (h >> 13) % 4),
        "type" => push_decimal(v, (h >> 15) % 10),
        "color" => push_decimal(v, (h >> 19) % 10),
        "speed_flag" => push_decimal(v, (h >> 23) % 2),
        "status" => push_decimal(v, (h >> 24) % 3),
        "time" => {
            push_padded(v, t.year, 4);
            v.push(b'-');
            push_padded(v, t.month, 2);
            v.push(b'-');
            push_padded(v, t.day, 2);
            push_padded(v, t.hour, 2);
            v.push(b':');
            push_padded(v, t.minute, 2);
            v.push(b':');
            push_padded(v, t.second, 2);
        }
        "event" => v.extend_from_slice(event),
        "officer" => {
            v.extend_from_slice(b"JGJ");
            push_padded(v, (h >> 26) % 100_000, 5);
        }
        _ => v.push(b'0'),
    }
}

/// `q0q1…q52`: the `wide53` qualifiers back to back (10 of two bytes, 43
/// of three), written once per row instead of number by number.
const WIDE53_NAMES: [u8; 149] = {
    let mut names = [0u8; 149];
    let (mut k, mut at) = (0, 0);
    while k < 53 {
        names[at] = b'q';
        at += 1;
        if k >= 10 {
            names[at] = b'0' + (k / 10) as u8;
            at += 1;
        }
        names[at] = b'0' + (k % 10) as u8;
        at += 1;
        k += 1;
    }
    names
};

/// Where each `wide53` cell's qualifier ends in [`WIDE53_NAMES`] and its
/// value in the record (see [`wide53_piece_len`]).
const WIDE53_ENDS: [(usize, usize); 53] = {
    let mut ends = [(0, 0); 53];
    let (mut k, mut value_end) = (0, 0);
    while k < 53 {
        value_end += wide53_piece_len(k);
        let name_end = if k < 10 {
            2 * (k + 1)
        } else {
            20 + 3 * (k - 9)
        };
        ends[k] = (name_end, value_end);
        k += 1;
    }
    ends
};

/// Piece lengths of `wide53`: 9 of 15 bytes, then 44 of 14 (751 in all).
const fn wide53_piece_len(k: usize) -> usize {
    if k < 9 { 15 } else { 14 }
}

fn record53(wide: bool, i: u64, out: &mut GeneratedRow) {
    let mut key = Vec::with_capacity(ROW53_LEN);
    ycsb_key_into(i, &mut key);
    out.row.resize(ROW53_LEN.saturating_sub(key.len()), b'0');
    out.row.extend_from_slice(&key);
    let h = fnv(i);
    if wide {
        // The qualifiers and the record's text each in one go, then cut:
        // the pieces are where the cells' names and values end.
        let (names, values) = out.buffers();
        names.extend_from_slice(&WIDE53_NAMES);
        text_into(h, RECORD53_LEN, values);
        out.end_cells(&WIDE53_ENDS);
    } else {
        out.add_cell(|q, v| {
            q.extend_from_slice(b"row");
            text_into(h, RECORD53_LEN, v);
        });
    }
}

#[cfg(test)]
mod tests;
