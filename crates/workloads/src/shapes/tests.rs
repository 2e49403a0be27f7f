//! Unit tests of the parent module.

use super::*;
use crate::{TEXT_ALPHABET, text, ycsb_key};

fn s(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("<not utf-8>")
}

#[test]
fn parse_names_and_sizes() {
    assert_eq!(Shape::parse("log9", None), Ok(Shape::Log9));
    assert_eq!(Shape::parse("GPS60", None), Ok(Shape::Gps60));
    assert_eq!(Shape::parse("kv", None), Ok(Shape::Kv { value_size: 100 }));
    assert_eq!(
        Shape::parse("kv", Some(10_000)),
        Ok(Shape::Kv { value_size: 10_000 })
    );
    assert_eq!(
        Shape::parse("kv1000", None),
        Ok(Shape::Kv { value_size: 1000 })
    );
    assert!(Shape::parse("kv1000", Some(10)).is_err());
    assert_eq!(
        Shape::parse("ycsb", None),
        Ok(Shape::Ycsb {
            field_count: 10,
            field_length: 100
        })
    );
    assert!(Shape::parse("log9", Some(5)).is_err());
    let e = Shape::parse("log10", None).err().unwrap_or_default();
    assert!(e.contains("log9") && e.contains("ycsb"), "{e}");
    for name in Shape::NAMES {
        let shape = Shape::parse(name, None);
        assert_eq!(shape.map(|s| s.name()), Ok(name));
    }
    assert_eq!(Shape::Kv { value_size: 10 }.to_string(), "kv10");
    assert_eq!(
        Shape::Ycsb {
            field_count: 10,
            field_length: 100
        }
        .to_string(),
        "ycsb"
    );
}

#[test]
fn log9_rows() {
    for i in 0..2000u64 {
        let r = Shape::Log9.row(i);
        assert_eq!(r.row, ycsb_key(i));
        assert_eq!(r.len(), 9);
        let total = r.value_bytes();
        assert!((90..=171).contains(&total), "row {i}: {total} bytes");
        for (j, (q, v)) in r.cells().enumerate() {
            assert_eq!(s(q), format!("c{j}"));
            let h = fnv(i * 9 + j as u64);
            assert_eq!(v.len() as u64, 10 + h % 10);
            assert_eq!(v, text(h, v.len()));
        }
    }
    assert_eq!(
        Shape::Log9.row(0).cell(0).map(|c| c.1),
        Some(&b"wzmjcy6qga55hq3"[..])
    );
}

#[test]
fn gps60_keys_and_values() {
    let r = Shape::Gps60.row(0);
    let key = s(&r.row).to_string();
    assert!(key.starts_with('京'), "{key}");
    assert!(key.ends_with(" 2016-01-23 00:00"), "{key}");
    // 京 (3 bytes) + 2 letters + 5 digits + " 2016-01-23 HH:MM".
    assert_eq!(r.row.len(), 3 + 2 + 5 + 17);
    let h = fnv(0);
    let plate: String = format!(
        "京{}{}{:05}",
        char::from(b'A' + (h % 26) as u8),
        char::from(b'A' + ((h >> 8) % 26) as u8),
        (h >> 16) % 100_000
    );
    assert_eq!(key, format!("{plate} 2016-01-23 00:00"));

    let r = Shape::Gps60.row(9 * 60 + 25);
    assert!(s(&r.row).ends_with(" 2016-01-23 09:25"));
    assert_eq!(
        r.row[..10],
        Shape::Gps60.row(0).row[..10],
        "same plate for 1440 minutes"
    );
    let last = Shape::Gps60.row(1439);
    assert!(s(&last.row).ends_with(" 23:59"));
    assert_ne!(
        Shape::Gps60.row(1440).row[..10],
        r.row[..10],
        "next plate after a day"
    );
    assert!(s(&Shape::Gps60.row(1440).row).ends_with(" 00:00"));

    for i in [0u64, 1, 777, 123_456] {
        let r = Shape::Gps60.row(i);
        assert_eq!(r.len(), 60);
        for (j, (q, v)) in r.cells().enumerate() {
            assert_eq!(s(q), j.to_string());
            let g = fnv(i * 60 + j as u64);
            let lon = 116.0 + (g % 10_000_000) as f64 / 1e7;
            let lat = 39.0 + ((g >> 32) % 10_000_000) as f64 / 1e7;
            assert_eq!(s(v), format!("{lon:.7} {lat:.7}"), "row {i} cell {j}");
        }
    }
    // Integer printing equals "%.7f" at the edges of the range too.
    for k in [0u64, 1, 9, 10, 5_000_000, 9_999_999] {
        let mut v = b"116.".to_vec();
        push_padded(&mut v, k, 7);
        assert_eq!(s(&v), format!("{:.7}", 116.0 + k as f64 / 1e7));
    }
}

#[test]
fn vehicle15_rows() {
    let r = Shape::Vehicle15.row(0);
    let names: Vec<&str> = r.cells().map(|(q, _)| s(q)).collect();
    assert_eq!(names, VEHICLE15_QUALIFIERS.to_vec());
    let field = |r: &GeneratedRow, name: &str| {
        r.cells()
            .find(|(q, _)| *q == name.as_bytes())
            .map(|(_, v)| s(v).to_string())
            .unwrap_or_default()
    };
    let h = fnv(0);
    let ms = (h >> 56) % 10;
    assert_eq!(field(&r, "event"), format!("20160123000000{ms:03}"));
    assert_eq!(field(&r, "time"), "2016-01-2300:00:00");
    assert_eq!(
        s(&r.row),
        format!("{} {}", field(&r, "plate"), field(&r, "event"))
    );
    assert_eq!(r.row.len(), 28);
    assert_eq!(field(&r, "f14"), "0");

    // 12_345_678 rows × 10 ms ≈ 34.3 hours: the date rolls over.
    let i = 12_345_678u64;
    let r = Shape::Vehicle15.row(i);
    let ms = i * 10 + (fnv(i) >> 56) % 10;
    let secs = ms / 1000;
    let expect_event = format!(
        "201601{:02}{:02}{:02}{:02}{:03}",
        23 + secs / 86_400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60,
        ms % 1000
    );
    assert_eq!(field(&r, "event"), expect_event);

    let mut keys = std::collections::HashSet::new();
    for i in 0..5000u64 {
        let r = Shape::Vehicle15.row(i);
        let id = field(&r, "id");
        assert_eq!(id.len(), 10);
        assert!(field(&r, "camera").starts_with("CAM") && field(&r, "camera").len() == 11);
        assert!(field(&r, "officer").starts_with("JGJ") && field(&r, "officer").len() == 8);
        assert!(["1", "2", "3", "4"].contains(&field(&r, "lane").as_str()));
        assert_eq!(field(&r, "time").len(), "2016-01-2309:25:01".len());
        assert_eq!(field(&r, "event").len(), 17);
        assert!(keys.insert(r.row.clone()), "row keys are unique");
    }
    // 31 January rolls into February.
    assert_eq!(
        civil_from_days(days_from_civil(2016, 1, 31) + 1),
        (2016, 2, 1)
    );
    assert_eq!(
        civil_from_days(days_from_civil(2016, 2, 28) + 1),
        (2016, 2, 29)
    );
    assert_eq!(days_from_civil(1970, 1, 1), 0);
}

#[test]
fn kv_rows() {
    for size in [10usize, 100, 1000, 10_000] {
        let shape = Shape::Kv { value_size: size };
        for i in 0..100u64 {
            let r = shape.row(i);
            assert_eq!(r.row.len(), 20);
            assert_eq!(
                s(&r.row),
                format!("{:020}", u128::from(fnv(i)) % 100_000_000_000_000_000_000)
            );
            let cells: Vec<_> = r.cells().collect();
            assert_eq!(cells, vec![(&b"v"[..], &text(fnv(i), size)[..])]);
        }
    }
}

#[test]
fn wide53_pieces_concatenate_to_single53() {
    assert_eq!((0..53).map(wide53_piece_len).sum::<usize>(), RECORD53_LEN);
    assert_eq!(
        WIDE53_ENDS.last(),
        Some(&(WIDE53_NAMES.len(), RECORD53_LEN))
    );
    for i in [0u64, 1, 2, 99_999, u64::MAX / 7] {
        let wide = Shape::Wide53.row(i);
        let single = Shape::Single53.row(i);
        assert_eq!(wide.row, single.row);
        assert_eq!(wide.row.len(), 64);
        let key = ycsb_key(i);
        assert!(wide.row.ends_with(&key));
        assert!(wide.row[..64 - key.len()].iter().all(|&b| b == b'0'));
        assert_eq!(wide.len(), 53);
        assert_eq!(single.len(), 1);
        let whole = text(fnv(i), 751);
        assert_eq!(single.cell(0), Some((&b"row"[..], &whole[..])));
        let mut joined = Vec::new();
        for (k, (q, v)) in wide.cells().enumerate() {
            assert_eq!(s(q), format!("q{k}"));
            assert_eq!(v.len(), if k < 9 { 15 } else { 14 });
            joined.extend_from_slice(v);
        }
        assert_eq!(joined, whole);
    }
}

#[test]
fn ycsb_rows() {
    let shape = Shape::Ycsb {
        field_count: 10,
        field_length: 100,
    };
    let r = shape.row(5);
    assert_eq!(r.row, ycsb_key(5));
    for (j, (q, v)) in r.cells().enumerate() {
        assert_eq!(s(q), format!("field{j}"));
        assert_eq!(v, text(fnv(5 * 10 + j as u64), 100));
    }
    let r = Shape::Ycsb {
        field_count: 3,
        field_length: 7,
    }
    .row(5);
    assert_eq!(r.len(), 3);
    assert!(
        r.cells()
            .all(|(_, v)| v.len() == 7 && v.iter().all(|b| TEXT_ALPHABET.contains(b)))
    );
}

#[test]
fn fill_row_reuses_buffers_across_shapes() {
    let shapes = [
        Shape::Gps60,
        Shape::Log9,
        Shape::Kv { value_size: 1000 },
        Shape::Wide53,
        Shape::Vehicle15,
        Shape::Single53,
        Shape::Ycsb {
            field_count: 10,
            field_length: 100,
        },
    ];
    let mut buf = GeneratedRow::default();
    for i in 0..50u64 {
        for shape in shapes {
            shape.fill_row(i, &mut buf);
            assert_eq!(buf, shape.row(i), "{shape} row {i}");
            assert_eq!(buf.len(), shape.cells_per_row(), "{shape} row {i}");
        }
    }
    assert!(buf.payload_bytes() > buf.value_bytes());
}

#[test]
fn fill_key_is_the_rows_key_for_every_shape() {
    let shapes = [
        Shape::Log9,
        Shape::Gps60,
        Shape::Vehicle15,
        Shape::Kv { value_size: 1000 },
        Shape::Wide53,
        Shape::Single53,
        Shape::Ycsb {
            field_count: 10,
            field_length: 100,
        },
    ];
    let mut key = vec![b'x'; 3];
    for shape in shapes {
        for i in [0u64, 1, 7, 1439, 1440, 99_999, u64::MAX / 3] {
            shape.fill_key(i, &mut key);
            assert_eq!(key, shape.row(i).row, "{shape} row {i}");
        }
    }
}
