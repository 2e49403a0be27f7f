//! `arbitrary` rows and cells for the round-trip targets: whatever an
//! encoder is given, decoding its output must give it back.

use arbitrary::Arbitrary;
use bytes::Bytes;
use ferrobase_types::{Cell, CellRun, CellType, Durability, RowMutation};

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Kind {
    Put,
    Delete,
    DeleteFamilyVersion,
    DeleteColumn,
    DeleteFamily,
}

impl Kind {
    pub fn cell_type(self) -> CellType {
        match self {
            Kind::Put => CellType::Put,
            Kind::Delete => CellType::Delete,
            Kind::DeleteFamilyVersion => CellType::DeleteFamilyVersion,
            Kind::DeleteColumn => CellType::DeleteColumn,
            Kind::DeleteFamily => CellType::DeleteFamily,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct ACell {
    pub qualifier: Vec<u8>,
    pub timestamp: u64,
    pub kind: Kind,
    pub value: Vec<u8>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct AFamily {
    pub name: Vec<u8>,
    pub cells: Vec<ACell>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct ARow {
    pub row: Vec<u8>,
    pub durability: u8,
    pub families: Vec<AFamily>,
}

pub fn durability(code: u8) -> Durability {
    match code % 5 {
        1 => Durability::SkipWal,
        2 => Durability::AsyncWal,
        3 => Durability::SyncWal,
        4 => Durability::FsyncWal,
        _ => Durability::UseDefault,
    }
}

impl ARow {
    /// The row as a mutation, one cell run per family group (empty groups
    /// included: decoders must keep them).
    pub fn mutation(&self) -> RowMutation {
        let mut m = RowMutation::new(Bytes::from(self.row.clone()))
            .with_durability(durability(self.durability));
        for f in &self.families {
            let mut run = CellRun::new();
            for c in &f.cells {
                run.push(&c.qualifier, c.timestamp, c.kind.cell_type(), &c.value);
            }
            m.push_family(Bytes::from(f.name.clone()), run);
        }
        m
    }

    /// The row as a read returns it: its cells, family by family.
    pub fn cells(&self) -> Vec<Cell> {
        let row = Bytes::from(self.row.clone());
        self.families
            .iter()
            .flat_map(|f| {
                let row = row.clone();
                f.cells.iter().map(move |c| Cell {
                    row: row.clone(),
                    family: Bytes::from(f.name.clone()),
                    qualifier: Bytes::from(c.qualifier.clone()),
                    timestamp: c.timestamp,
                    cell_type: c.kind.cell_type(),
                    value: Bytes::from(c.value.clone()),
                })
            })
            .collect()
    }
}
