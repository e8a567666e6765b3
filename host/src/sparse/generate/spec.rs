//! [`GenSpec`]: a generated matrix named by a string (`stencil27:64x64x64`), as the CLI and
//! the benchmarks take it.

use std::fmt;
use std::str::FromStr;

use super::{
    banded, block_random, circuit, delaunay, fem, poisson2d, poisson3d, power_law, random_spd,
    random_uniform, rmat, road, shuffle, stencil27, web,
};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::sparse::Csr;

const KINDS: &str = "stencil27, poisson2d, poisson3d, random, block, banded, powerlaw, road, fem, rmat, web, circuit, delaunay, shuffle";

/// A generated matrix, written `KIND:ARGUMENTS`. Grid kinds take their sizes first (one
/// number for a square or cube); the others take `key=value` pairs, in any order, comma
/// separated. Keys in brackets are optional (defaults shown); `seed` defaults to 1.
///
/// | spec | matrix |
/// | --- | --- |
/// | `stencil27:NX[xNYxNZ]` | HPCG 27-point stencil (26 / -1) |
/// | `poisson2d:NX[xNY]` | 5-point Laplacian (4 / -1) |
/// | `poisson3d:NX[xNYxNZ]` | 7-point Laplacian (6 / -1) |
/// | `random:rows=R,nnz_per_row=K[,cols=R][,spd=false][,seed=1]` | K uniform random columns per row; `spd=true`: symmetric positive definite (square) |
/// | `block:block_rows=B,blocks_per_row=K[,block_cols=B][,block_size=8][,seed=1]` | dense blocks at random block positions |
/// | `banded:n=N,bandwidth=W[,nnz_per_row=2W+1][,dominant=false][,seed=1]` | random entries within W of the diagonal |
/// | `powerlaw:n=N[,min_nnz=2][,max_nnz=N][,alpha=1.5][,seed=1]` | Pareto row lengths: a few very long rows |
/// | `road:n=N[,window=64][,seed=1]` | 2 to 4 entries per row, near the diagonal |
/// | `fem:NX[xNYxNZ][,dof=3][,seed=1]` | dof x dof blocks coupling 27 grid neighbours, SPD |
/// | `rmat:scale=S,edge_factor=E[,a=0.57][,b=0.19][,c=0.19][,seed=1]` | Graph500 R-MAT graph, 2^S vertices renumbered at random |
/// | `web:n=N[,seed=1]` | web-like: Zipf out-degrees, half the rows empty, local and popular links |
/// | `circuit:n=N[,dense_rows=10][,dense_len=N/100][,seed=1]` | short rows near the diagonal plus dense rows and columns |
/// | `delaunay:n=N[,seed=1]` | Laplacian (+ I) of a 2-D Delaunay mesh of N random points, SPD |
/// | `shuffle:SPEC` | SPEC's matrix symmetrically renumbered at random (seed 1) |
///
/// Sizes accept `_` separators (`rows=1_000_000`). `Display` writes the spec back with every
/// key, so a parsed spec names its matrix exactly in reports.
#[derive(Clone, Debug, PartialEq)]
pub enum GenSpec {
    Stencil27 { nx: usize, ny: usize, nz: usize },
    Poisson2d { nx: usize, ny: usize },
    Poisson3d { nx: usize, ny: usize, nz: usize },
    Random { rows: usize, cols: usize, nnz_per_row: usize, spd: bool, seed: u64 },
    Block { block_rows: usize, block_cols: usize, block_size: usize, blocks_per_row: usize, seed: u64 },
    Banded { n: usize, bandwidth: usize, nnz_per_row: Option<usize>, dominant: bool, seed: u64 },
    PowerLaw { n: usize, min_nnz: usize, max_nnz: usize, alpha: f64, seed: u64 },
    Road { n: usize, window: usize, seed: u64 },
    Fem { nx: usize, ny: usize, nz: usize, dof: usize, seed: u64 },
    Rmat { scale: u32, edge_factor: usize, a: f64, b: f64, c: f64, seed: u64 },
    Web { n: usize, seed: u64 },
    Circuit { n: usize, dense_rows: usize, dense_len: usize, seed: u64 },
    Delaunay { n: usize, seed: u64 },
    Shuffle(Box<GenSpec>),
}

impl GenSpec {
    /// Builds the matrix.
    pub fn generate<T: Scalar>(&self) -> Result<Csr<T>> {
        match *self {
            GenSpec::Stencil27 { nx, ny, nz } => stencil27(nx, ny, nz),
            GenSpec::Poisson2d { nx, ny } => poisson2d(nx, ny),
            GenSpec::Poisson3d { nx, ny, nz } => poisson3d(nx, ny, nz),
            GenSpec::Random { rows, cols, nnz_per_row, spd: false, seed } => {
                random_uniform(rows, cols, nnz_per_row, seed)
            }
            GenSpec::Random { rows, cols, nnz_per_row, spd: true, seed } => {
                if rows != cols {
                    return Err(Error::InvalidInput(format!(
                        "generator spec `{self}`: spd=true needs a square matrix (cols = rows)"
                    )));
                }
                random_spd(rows, nnz_per_row, seed)
            }
            GenSpec::Block { block_rows, block_cols, block_size, blocks_per_row, seed } => {
                block_random(block_rows, block_cols, block_size, blocks_per_row, seed)
            }
            GenSpec::Banded { n, bandwidth, nnz_per_row, dominant, seed } => {
                banded(n, bandwidth, nnz_per_row, dominant, seed)
            }
            GenSpec::PowerLaw { n, min_nnz, max_nnz, alpha, seed } => {
                power_law(n, min_nnz, max_nnz, alpha, seed)
            }
            GenSpec::Road { n, window, seed } => road(n, window, seed),
            GenSpec::Fem { nx, ny, nz, dof, seed } => fem(nx, ny, nz, dof, seed),
            GenSpec::Rmat { scale, edge_factor, a, b, c, seed } => rmat(scale, edge_factor, a, b, c, seed),
            GenSpec::Web { n, seed } => web(n, seed),
            GenSpec::Circuit { n, dense_rows, dense_len, seed } => circuit(n, dense_rows, dense_len, seed),
            GenSpec::Delaunay { n, seed } => delaunay(n, seed),
            GenSpec::Shuffle(ref inner) => shuffle(&inner.generate()?, 1),
        }
    }

    /// The kind, as written before the colon.
    pub fn kind(&self) -> &'static str {
        match self {
            GenSpec::Stencil27 { .. } => "stencil27",
            GenSpec::Poisson2d { .. } => "poisson2d",
            GenSpec::Poisson3d { .. } => "poisson3d",
            GenSpec::Random { .. } => "random",
            GenSpec::Block { .. } => "block",
            GenSpec::Banded { .. } => "banded",
            GenSpec::PowerLaw { .. } => "powerlaw",
            GenSpec::Road { .. } => "road",
            GenSpec::Fem { .. } => "fem",
            GenSpec::Rmat { .. } => "rmat",
            GenSpec::Web { .. } => "web",
            GenSpec::Circuit { .. } => "circuit",
            GenSpec::Delaunay { .. } => "delaunay",
            GenSpec::Shuffle(_) => "shuffle",
        }
    }
}

impl FromStr for GenSpec {
    type Err = Error;

    fn from_str(spec: &str) -> Result<GenSpec> {
        parse(spec).map_err(|message| Error::InvalidInput(format!("generator spec `{spec}`: {message}")))
    }
}

fn parse(spec: &str) -> std::result::Result<GenSpec, String> {
    let (kind, arguments) = spec
        .split_once(':')
        .ok_or_else(|| format!("expected KIND:ARGUMENTS, e.g. stencil27:64x64x64 (kinds: {KINDS})"))?;
    let kind = kind.trim().to_ascii_lowercase();
    if !KINDS.split(", ").any(|known| known == kind) {
        return Err(format!("unknown kind `{kind}` (expected one of {KINDS})"));
    }
    if kind == "shuffle" {
        return Ok(GenSpec::Shuffle(Box::new(parse(arguments)?)));
    }
    let takes_grid = matches!(kind.as_str(), "stencil27" | "poisson2d" | "poisson3d" | "fem");
    let mut args = Args::parse(arguments, takes_grid)?;
    let parsed = match kind.as_str() {
        "stencil27" => {
            let [nx, ny, nz] = args.grid(3)?;
            GenSpec::Stencil27 { nx, ny, nz }
        }
        "poisson2d" => {
            let [nx, ny, _] = args.grid(2)?;
            GenSpec::Poisson2d { nx, ny }
        }
        "poisson3d" => {
            let [nx, ny, nz] = args.grid(3)?;
            GenSpec::Poisson3d { nx, ny, nz }
        }
        "random" => {
            let rows = args.required("rows")?;
            GenSpec::Random {
                rows,
                cols: args.optional("cols")?.unwrap_or(rows),
                nnz_per_row: args.required("nnz_per_row")?,
                spd: args.optional("spd")?.unwrap_or(false),
                seed: args.seed()?,
            }
        }
        "block" => {
            let block_rows = args.required("block_rows")?;
            GenSpec::Block {
                block_rows,
                block_cols: args.optional("block_cols")?.unwrap_or(block_rows),
                block_size: args.optional("block_size")?.unwrap_or(8),
                blocks_per_row: args.required("blocks_per_row")?,
                seed: args.seed()?,
            }
        }
        "banded" => GenSpec::Banded {
            n: args.required("n")?,
            bandwidth: args.required("bandwidth")?,
            nnz_per_row: args.optional("nnz_per_row")?,
            dominant: args.optional("dominant")?.unwrap_or(false),
            seed: args.seed()?,
        },
        "powerlaw" => {
            let n = args.required("n")?;
            GenSpec::PowerLaw {
                n,
                min_nnz: args.optional("min_nnz")?.unwrap_or(2),
                max_nnz: args.optional("max_nnz")?.unwrap_or(n),
                alpha: args.optional("alpha")?.unwrap_or(1.5),
                seed: args.seed()?,
            }
        }
        "road" => GenSpec::Road {
            n: args.required("n")?,
            window: args.optional("window")?.unwrap_or(64),
            seed: args.seed()?,
        },
        "fem" => {
            let [nx, ny, nz] = args.grid(3)?;
            GenSpec::Fem { nx, ny, nz, dof: args.optional("dof")?.unwrap_or(3), seed: args.seed()? }
        }
        "rmat" => {
            let scale = args.required::<usize>("scale")?;
            let scale = u32::try_from(scale).map_err(|_| format!("`scale={scale}`: too large"))?;
            GenSpec::Rmat {
                scale,
                edge_factor: args.required("edge_factor")?,
                a: args.optional("a")?.unwrap_or(0.57),
                b: args.optional("b")?.unwrap_or(0.19),
                c: args.optional("c")?.unwrap_or(0.19),
                seed: args.seed()?,
            }
        }
        "web" => GenSpec::Web { n: args.required("n")?, seed: args.seed()? },
        "circuit" => {
            let n = args.required("n")?;
            GenSpec::Circuit {
                n,
                dense_rows: args.optional("dense_rows")?.unwrap_or(10),
                dense_len: args.optional("dense_len")?.unwrap_or(n / 100),
                seed: args.seed()?,
            }
        }
        "delaunay" => GenSpec::Delaunay { n: args.required("n")?, seed: args.seed()? },
        other => unreachable!("kind `{other}` is in KINDS but not parsed"),
    };
    args.finish()?;
    Ok(parsed)
}

/// The arguments after the colon: an optional leading grid (`64x64x64`), then `key=value`s.
/// Remembers which keys were asked for, to name them when an unknown one is left over.
struct Args<'a> {
    grid: Option<&'a str>,
    pairs: Vec<(&'a str, &'a str)>,
    taken: Vec<&'a str>,
    known: Vec<&'static str>,
}

impl<'a> Args<'a> {
    fn parse(arguments: &'a str, takes_grid: bool) -> std::result::Result<Args<'a>, String> {
        let mut args = Args { grid: None, pairs: Vec::new(), taken: Vec::new(), known: Vec::new() };
        if arguments.trim().is_empty() {
            return Ok(args);
        }
        for (i, token) in arguments.split(',').map(str::trim).enumerate() {
            match token.split_once('=') {
                Some((key, value)) => {
                    let key = key.trim();
                    if args.pairs.iter().any(|&(k, _)| k == key) {
                        return Err(format!("`{key}` given twice"));
                    }
                    args.pairs.push((key, value.trim()));
                }
                None if token.is_empty() => return Err("empty argument (stray comma?)".into()),
                None if i == 0 && takes_grid => args.grid = Some(token),
                None if i == 0 => {
                    return Err(format!("unexpected `{token}`: this kind takes key=value arguments only"));
                }
                None => {
                    return Err(format!("`{token}` should be key=value (only grid sizes come first, bare)"));
                }
            }
        }
        Ok(args)
    }

    /// Grid sizes `NX[xNY[xNZ]]` for a `dims`-dimensional grid: one number means the same in
    /// every dimension; unused dimensions are 1.
    fn grid(&mut self, dims: usize) -> std::result::Result<[usize; 3], String> {
        let example = if dims == 2 { "1000 or 1000x500" } else { "64 or 64x64x32" };
        let grid = self.grid.take().ok_or_else(|| format!("expects grid sizes first, like {example}"))?;
        let sizes = grid
            .split(['x', 'X'])
            .map(|size| {
                <usize as Value>::parse(size)
                    .ok_or_else(|| format!("grid size `{size}`: expected a whole number"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut out = [1; 3];
        match sizes.len() {
            1 => out[..dims].fill(sizes[0]),
            n if n == dims => out[..dims].copy_from_slice(&sizes),
            n => return Err(format!("grid `{grid}` has {n} sizes; expected 1 or {dims}, like {example}")),
        }
        Ok(out)
    }

    fn optional<V: Value>(&mut self, key: &'static str) -> std::result::Result<Option<V>, String> {
        self.known.push(key);
        let Some(&(key, value)) = self.pairs.iter().find(|&&(k, _)| k == key) else { return Ok(None) };
        self.taken.push(key);
        parse_value(key, value).map(Some)
    }

    fn required<V: Value>(&mut self, key: &'static str) -> std::result::Result<V, String> {
        self.optional(key)?.ok_or_else(|| format!("missing `{key}=`"))
    }

    fn seed(&mut self) -> std::result::Result<u64, String> {
        Ok(self.optional("seed")?.unwrap_or(1))
    }

    /// Errors on keys the kind did not ask for.
    fn finish(self) -> std::result::Result<(), String> {
        match self.pairs.iter().find(|(k, _)| !self.taken.contains(k)) {
            Some((key, _)) => {
                Err(format!("unknown argument `{key}` (this kind takes {})", self.known.join(", ")))
            }
            None => Ok(()),
        }
    }
}

/// Parses one value, or says what was expected, naming the key.
fn parse_value<V: Value>(key: &str, text: &str) -> std::result::Result<V, String> {
    V::parse(text).ok_or_else(|| format!("`{key}={text}`: expected {}", V::EXPECTED))
}

/// What a spec's values can be.
trait Value: Sized {
    const EXPECTED: &'static str;
    fn parse(text: &str) -> Option<Self>;
}

impl Value for usize {
    const EXPECTED: &'static str = "a whole number";
    fn parse(text: &str) -> Option<Self> {
        text.replace('_', "").parse().ok()
    }
}

impl Value for u64 {
    const EXPECTED: &'static str = "a whole number";
    fn parse(text: &str) -> Option<Self> {
        text.replace('_', "").parse().ok()
    }
}

impl Value for f64 {
    const EXPECTED: &'static str = "a finite number";
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok().filter(|v: &f64| v.is_finite())
    }
}

impl Value for bool {
    const EXPECTED: &'static str = "true or false";
    fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(true),
            "false" | "no" | "0" => Some(false),
            _ => None,
        }
    }
}

impl fmt::Display for GenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind();
        match self {
            GenSpec::Stencil27 { nx, ny, nz } | GenSpec::Poisson3d { nx, ny, nz } => {
                write!(f, "{kind}:{nx}x{ny}x{nz}")
            }
            GenSpec::Poisson2d { nx, ny } => write!(f, "{kind}:{nx}x{ny}"),
            GenSpec::Random { rows, cols, nnz_per_row, spd, seed } => {
                write!(f, "{kind}:rows={rows},cols={cols},nnz_per_row={nnz_per_row},spd={spd},seed={seed}")
            }
            GenSpec::Block { block_rows, block_cols, block_size, blocks_per_row, seed } => write!(
                f,
                "{kind}:block_rows={block_rows},block_cols={block_cols},block_size={block_size},blocks_per_row={blocks_per_row},seed={seed}"
            ),
            GenSpec::Banded { n, bandwidth, nnz_per_row, dominant, seed } => {
                write!(f, "{kind}:n={n},bandwidth={bandwidth}")?;
                if let Some(k) = nnz_per_row {
                    write!(f, ",nnz_per_row={k}")?;
                }
                write!(f, ",dominant={dominant},seed={seed}")
            }
            GenSpec::PowerLaw { n, min_nnz, max_nnz, alpha, seed } => {
                write!(f, "{kind}:n={n},min_nnz={min_nnz},max_nnz={max_nnz},alpha={alpha},seed={seed}")
            }
            GenSpec::Road { n, window, seed } => write!(f, "{kind}:n={n},window={window},seed={seed}"),
            GenSpec::Fem { nx, ny, nz, dof, seed } => {
                write!(f, "{kind}:{nx}x{ny}x{nz},dof={dof},seed={seed}")
            }
            GenSpec::Rmat { scale, edge_factor, a, b, c, seed } => {
                write!(f, "{kind}:scale={scale},edge_factor={edge_factor},a={a},b={b},c={c},seed={seed}")
            }
            GenSpec::Web { n, seed } | GenSpec::Delaunay { n, seed } => write!(f, "{kind}:n={n},seed={seed}"),
            GenSpec::Circuit { n, dense_rows, dense_len, seed } => {
                write!(f, "{kind}:n={n},dense_rows={dense_rows},dense_len={dense_len},seed={seed}")
            }
            GenSpec::Shuffle(inner) => write!(f, "{kind}:{inner}"),
        }
    }
}
