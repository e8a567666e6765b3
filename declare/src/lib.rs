//! One declaration per kernel. A kernel is a generic `unsafe fn` in the `kernels` crate marked
//! `#[gpu::kernel(..)]`; the attribute lists the values its generic parameters take:
//!
//! ```text
//! #[gpu::kernel(W = 2 | 4 | 8 | 16 | 32, T = f32 | f64)]
//! pub unsafe fn vector<T: Float, const W: u32>(rows: u32, row_ptr: *const u32, /* .. */ y: *mut T)
//! ```
//!
//! Build scripts read those declarations ([`scan`]) and write both sides from them:
//! [`entry_points`] the `extern "ptx-kernel"` functions of the device crate (one per
//! combination of values), [`launchers`] a typed host function per kernel that takes device
//! buffers where the kernel takes pointers, checks nothing the types already say, and picks the
//! entry point from its type and const arguments. A launch with the wrong number, type or
//! mutability of arguments therefore fails to compile.
//!
//! Naming: a kernel at module path `spmv::csr` named `vector` has the entry points
//! `spmv_csr_vector_w8_f64` and so on: the path, the function's name (left out when it repeats
//! the module's, as in `gemm::blocked::blocked` -> `gemm_blocked`), then each const parameter
//! as its lowercase name and value, then the type parameter's value.
//!
//! Parameter types: integers and floats, the type parameter, `*const X` (an input buffer),
//! `*mut X` (an output or in-out buffer), `Strided<X>` / `StridedMut<X>` (a block of a
//! row-major matrix, `abi`'s) and other `abi::` types written with their path (structures
//! passed by value).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{Attribute, FnArg, GenericParam, Ident, Item, ItemFn, Lit, Pat, Token, Type};

/// The attribute that marks a kernel: `#[gpu::kernel]`, `gpu` being a tool registered by the
/// kernels crate (`#![register_tool(gpu)]`), so the attribute itself expands to nothing.
const TOOL: &str = "gpu";

/// One declared kernel.
#[derive(Clone)]
pub struct Kernel {
    /// Module path inside the kernels crate, e.g. `["spmv", "csr"]`.
    pub module: Vec<String>,
    pub name: String,
    /// The source file, relative to the crate's `src/`.
    pub file: PathBuf,
    pub docs: Vec<String>,
    /// `cfg(..)` conditions of the function and of the modules around it.
    pub cfgs: Vec<TokenStream>,
    /// Generic parameters in declaration order.
    pub generics: Vec<Generic>,
    pub params: Vec<Param>,
    /// The most threads a block launches with (`#[gpu::max_threads(N)]`): written into the
    /// entry points' PTX as `.maxntid`, which `setmaxnreg` needs (rustc has no launch bounds).
    pub max_threads: Option<u32>,
    /// Blocks per cluster along x (`#[gpu::cluster(N)]`): `.reqnctapercluster` in the PTX, so
    /// that every launch of the kernel runs its blocks in clusters of N.
    pub cluster: Option<u32>,
    /// Blocks an SM should hold at once (`#[gpu::min_blocks(N)]`, with `max_threads`):
    /// `.minnctapersm` in the PTX, which caps ptxas's registers a thread to fit them.
    pub min_blocks: Option<u32>,
}

/// One parameter of a kernel and how it travels.
#[derive(Clone)]
pub struct Param {
    pub name: Ident,
    pub ty: Type,
    kind: Kind,
}

/// A generic parameter with the values the attribute gives it.
#[derive(Clone)]
pub enum Generic {
    Type { name: Ident, values: Vec<Type> },
    Const { name: Ident, ty: Box<Type>, values: Vec<ConstValue> },
}

/// A const parameter's value: an integer, or an `abi::` constant (named in the entry point by
/// its own name: `abi::symgs::DONE_FLAGS` -> `_done_flags`).
#[derive(Clone)]
pub enum ConstValue {
    Int(syn::LitInt),
    Abi(syn::Path),
}

impl ConstValue {
    fn tokens(&self) -> TokenStream {
        match self {
            ConstValue::Int(lit) => quote!(#lit),
            ConstValue::Abi(path) => quote!(#path),
        }
    }

    /// What the entry point's name says of it, after the parameter's name for integers.
    fn label(&self, param: &Ident) -> String {
        match self {
            ConstValue::Int(lit) => format!("{}{}", param.to_string().to_lowercase(), lit.base10_digits()),
            ConstValue::Abi(path) => path.segments.last().expect("a path").ident.to_string().to_lowercase(),
        }
    }

    fn display(&self) -> String {
        match self {
            ConstValue::Int(lit) => lit.base10_digits().to_string(),
            ConstValue::Abi(path) => type_string(path),
        }
    }
}

impl Generic {
    fn name(&self) -> &Ident {
        match self {
            Generic::Type { name, .. } | Generic::Const { name, .. } => name,
        }
    }

    fn len(&self) -> usize {
        match self {
            Generic::Type { values, .. } => values.len(),
            Generic::Const { values, .. } => values.len(),
        }
    }
}

/// One entry point: the value index chosen for each generic parameter.
struct Variant {
    choice: Vec<usize>,
}

impl Kernel {
    /// `spmv::csr::vector`, for messages.
    pub fn path(&self) -> String {
        let mut parts = self.module.clone();
        parts.push(self.name.clone());
        parts.join("::")
    }

    /// The entry points' common prefix: the module path and the name, joined by `_`.
    fn base(&self) -> String {
        let mut parts = self.module.clone();
        if parts.last() != Some(&self.name) {
            parts.push(self.name.clone());
        }
        parts.join("_")
    }

    fn type_param(&self) -> Option<(usize, &Ident, &Vec<Type>)> {
        type_param(&self.generics)
    }

    /// Every combination of values, the last generic parameter varying fastest.
    fn variants(&self) -> Vec<Variant> {
        let mut all = vec![Variant { choice: Vec::new() }];
        for g in &self.generics {
            all = all
                .into_iter()
                .flat_map(|v| {
                    (0..g.len()).map(move |i| {
                        let mut choice = v.choice.clone();
                        choice.push(i);
                        Variant { choice }
                    })
                })
                .collect();
        }
        all
    }

    /// The entry point's name: consts first (`_w8`), then the type (`_f64`).
    fn entry_name(&self, v: &Variant) -> String {
        let mut name = self.base();
        for (g, &i) in self.generics.iter().zip(&v.choice) {
            if let Generic::Const { name: n, values, .. } = g {
                let _ = write!(name, "_{}", values[i].label(n));
            }
        }
        for (g, &i) in self.generics.iter().zip(&v.choice) {
            if let Generic::Type { values, .. } = g {
                let _ = write!(name, "_{}", snake(&type_string(&values[i])));
            }
        }
        name
    }

    /// The generic arguments of variant `v`, in declaration order.
    fn generic_args(&self, v: &Variant) -> Vec<TokenStream> {
        self.generics
            .iter()
            .zip(&v.choice)
            .map(|(g, &i)| match g {
                Generic::Type { values, .. } => {
                    let ty = &values[i];
                    quote!(#ty)
                }
                Generic::Const { values, .. } => match &values[i] {
                    ConstValue::Int(lit) => quote!(#lit),
                    ConstValue::Abi(path) => quote!({ #path }),
                },
            })
            .collect()
    }
}

/// Reads every `#[gpu::kernel]` function of the crate whose root is `lib_rs`, following its
/// `mod` declarations.
pub fn scan(lib_rs: &Path) -> Result<Vec<Kernel>, String> {
    let src = lib_rs.parent().ok_or("lib.rs has no folder")?.to_path_buf();
    let mut kernels = Vec::new();
    let file = read(lib_rs)?;
    let mut scanner = Scanner { src: &src, kernels: &mut kernels };
    scanner.items(&file.items, &[], &[], &src, Path::new("lib.rs"))?;
    let mut names = BTreeMap::new();
    for k in &kernels {
        for v in k.variants() {
            if let Some(other) = names.insert(k.entry_name(&v), k.path()) {
                return Err(format!(
                    "{} and {other} both make the entry point {}",
                    k.path(),
                    k.entry_name(&v)
                ));
            }
        }
    }
    Ok(kernels)
}

fn read(path: &Path) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}:{}: {e}", path.display(), at.line, at.column + 1)
    })
}

struct Scanner<'a> {
    src: &'a Path,
    kernels: &'a mut Vec<Kernel>,
}

impl Scanner<'_> {
    /// `dir`: where the child modules of these items live; `file`: the items' file.
    fn items(
        &mut self,
        items: &[Item],
        module: &[String],
        cfgs: &[TokenStream],
        dir: &Path,
        file: &Path,
    ) -> Result<(), String> {
        for item in items {
            match item {
                Item::Fn(f) => {
                    if let Some(attr) = f.attrs.iter().find(|a| is_tool_attr(a, "kernel")) {
                        let k = kernel(f, attr, module, cfgs, file)
                            .map_err(|e| format!("{}: `{}`: {e}", file.display(), f.sig.ident))?;
                        self.kernels.push(k);
                    }
                }
                Item::Mod(m) => {
                    let mut inner_cfgs = cfgs.to_vec();
                    inner_cfgs.extend(cfg_attrs(&m.attrs));
                    let mut inner = module.to_vec();
                    inner.push(m.ident.to_string());
                    let child_dir = dir.join(m.ident.to_string());
                    match &m.content {
                        Some((_, items)) => self.items(items, &inner, &inner_cfgs, &child_dir, file)?,
                        None => {
                            let flat = dir.join(format!("{}.rs", m.ident));
                            let nested = child_dir.join("mod.rs");
                            let path = if flat.exists() { flat } else { nested };
                            let parsed = read(&path)?;
                            let rel = path.strip_prefix(self.src).unwrap_or(&path).to_path_buf();
                            self.items(&parsed.items, &inner, &inner_cfgs, &child_dir, &rel)?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether `attr` is `#[gpu::<name>..]`.
fn is_tool_attr(attr: &Attribute, name: &str) -> bool {
    let segments: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    segments == [TOOL, name]
}

fn cfg_attrs(attrs: &[Attribute]) -> Vec<TokenStream> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(|a| match &a.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            other => quote!(#other),
        })
        .collect()
}

/// `W = 2 | 4`, `T = f32 | f64`.
struct Assignment {
    name: Ident,
    values: Vec<TokenStream>,
}

impl Parse for Assignment {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        let mut values = vec![parse_value(input)?];
        while input.peek(Token![|]) {
            input.parse::<Token![|]>()?;
            values.push(parse_value(input)?);
        }
        Ok(Assignment { name, values })
    }
}

fn parse_value(input: ParseStream) -> syn::Result<TokenStream> {
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        Ok(quote!(#lit))
    } else {
        let ty: syn::Path = input.parse()?;
        Ok(quote!(#ty))
    }
}

fn kernel(
    f: &ItemFn,
    attr: &Attribute,
    module: &[String],
    cfgs: &[TokenStream],
    file: &Path,
) -> Result<Kernel, String> {
    if f.sig.unsafety.is_none() || f.sig.abi.is_some() || !matches!(f.sig.output, syn::ReturnType::Default) {
        return Err("a kernel is a plain `unsafe fn` returning nothing".into());
    }
    let assignments: Vec<Assignment> = match &attr.meta {
        syn::Meta::Path(_) => Vec::new(),
        syn::Meta::List(list) => list
            .parse_args_with(Punctuated::<Assignment, Token![,]>::parse_terminated)
            .map_err(|e| format!("#[gpu::kernel(..)]: {e}"))?
            .into_iter()
            .collect(),
        syn::Meta::NameValue(_) => return Err("write #[gpu::kernel(T = f32 | f64)]".into()),
    };
    let mut generics = Vec::new();
    for param in &f.sig.generics.params {
        let (name, kind) = match param {
            GenericParam::Type(t) => (t.ident.clone(), None),
            GenericParam::Const(c) => (c.ident.clone(), Some(Box::new(c.ty.clone()))),
            GenericParam::Lifetime(_) => continue,
        };
        let a = assignments
            .iter()
            .find(|a| a.name == name)
            .ok_or_else(|| format!("generic parameter {name} has no values in #[gpu::kernel(..)]"))?;
        generics.push(match kind {
            None => Generic::Type {
                name,
                values: a
                    .values
                    .iter()
                    .map(|v| syn::parse2(v.clone()).map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?,
            },
            Some(ty) => Generic::Const {
                name,
                ty,
                values: a.values.iter().map(const_value).collect::<Result<_, _>>()?,
            },
        });
    }
    if let Some(extra) = assignments.iter().find(|a| !generics.iter().any(|g| *g.name() == a.name)) {
        return Err(format!("#[gpu::kernel(..)] names {}, which is not a generic parameter", extra.name));
    }
    if generics.iter().filter(|g| matches!(g, Generic::Type { .. })).count() > 1 {
        return Err("at most one type parameter".into());
    }
    let type_name = type_param(&generics).map(|(_, name, _)| name.to_string());
    let mut params = Vec::new();
    for arg in &f.sig.inputs {
        let FnArg::Typed(pt) = arg else { return Err("a kernel takes no self".into()) };
        let Pat::Ident(id) = &*pt.pat else { return Err("parameters are plain names".into()) };
        let kind =
            classify(&pt.ty, type_name.as_deref()).map_err(|e| format!("parameter `{}`: {e}", id.ident))?;
        params.push(Param { name: id.ident.clone(), ty: (*pt.ty).clone(), kind });
    }
    let mut all_cfgs = cfgs.to_vec();
    all_cfgs.extend(cfg_attrs(&f.attrs));
    Ok(Kernel {
        module: module.to_vec(),
        name: f.sig.ident.to_string(),
        file: file.to_path_buf(),
        docs: docs(&f.attrs),
        cfgs: all_cfgs,
        generics,
        params,
        max_threads: tool_number(&f.attrs, "max_threads", 1024)?,
        cluster: tool_number(&f.attrs, "cluster", 8)?,
        min_blocks: tool_number(&f.attrs, "min_blocks", 32)?,
    })
}

/// The value of `#[gpu::<name>(N)]`, if the function has one, from 1 to `most`.
fn tool_number(attrs: &[Attribute], name: &str, most: u32) -> Result<Option<u32>, String> {
    let Some(attr) = attrs.iter().find(|a| is_tool_attr(a, name)) else { return Ok(None) };
    let number = attr
        .parse_args::<syn::LitInt>()
        .and_then(|lit| lit.base10_parse::<u32>())
        .map_err(|e| format!("#[gpu::{name}(N)]: {e}"))?;
    if number == 0 || number > most {
        return Err(format!("#[gpu::{name}({number})]: from 1 to {most}"));
    }
    Ok(Some(number))
}

/// The PTX `ptx` with the launch directives the kernels declare on each of their entry points:
/// `.maxntid` (`#[gpu::max_threads(N)]`) and `.reqnctapercluster` (`#[gpu::cluster(N)]`).
/// Entry points not in `ptx` (those of another architecture) are skipped.
pub fn launch_directives(kernels: &[Kernel], ptx: &str) -> String {
    let mut ptx = ptx.to_string();
    for k in kernels {
        let mut directives = String::new();
        if let Some(threads) = k.max_threads {
            let _ = write!(directives, "\n.maxntid {threads}, 1, 1");
        }
        if let Some(blocks) = k.min_blocks {
            let _ = write!(directives, "\n.minnctapersm {blocks}");
        }
        if let Some(blocks) = k.cluster {
            let _ = write!(directives, "\n.reqnctapercluster {blocks}, 1, 1");
        }
        if directives.is_empty() {
            continue;
        }
        for v in k.variants() {
            let header = format!(".entry {}(", k.entry_name(&v));
            let Some(start) = ptx.find(&header) else { continue };
            // The body opens on the first line that is a lone `{` after the parameter list.
            let Some(body) = ptx[start..].find("\n{").map(|i| start + i) else { continue };
            ptx.insert_str(body, &directives);
        }
    }
    ptx
}

fn const_value(v: &TokenStream) -> Result<ConstValue, String> {
    if let Ok(lit) = syn::parse2::<syn::LitInt>(v.clone()) {
        return Ok(ConstValue::Int(lit));
    }
    match syn::parse2::<syn::Path>(v.clone()) {
        Ok(path) if path.segments.first().is_some_and(|s| s.ident == "abi") => Ok(ConstValue::Abi(path)),
        _ => Err(format!("{v}: a const parameter's value is an integer or an `abi::` constant")),
    }
}

fn docs(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The type parameter among `generics` (at most one): its position, name and values.
fn type_param(generics: &[Generic]) -> Option<(usize, &Ident, &Vec<Type>)> {
    generics.iter().enumerate().find_map(|(i, g)| match g {
        Generic::Type { name, values } => Some((i, name, values)),
        Generic::Const { .. } => None,
    })
}

/// How a parameter travels.
#[derive(Clone)]
enum Kind {
    /// By value: an integer, a float, the type parameter or an `abi::` structure.
    Value,
    /// `*const X`: the host passes a device buffer it only lends.
    In(Type),
    /// `*mut X`: the host passes a device buffer it lends mutably.
    Out(Type),
    /// `abi::Strided<X>` / `abi::StridedMut<X>`: a block of a row-major matrix.
    Block(Type),
    BlockMut(Type),
    /// Another `abi::` structure.
    Abi,
}

const PRIMITIVES: [&str; 8] = ["u8", "u16", "u32", "u64", "i32", "i64", "f32", "f64"];

fn classify(ty: &Type, type_param: Option<&str>) -> Result<Kind, String> {
    match ty {
        Type::Ptr(p) => {
            let elem = (*p.elem).clone();
            classify_elem(&elem, type_param)?;
            Ok(if p.mutability.is_some() { Kind::Out(elem) } else { Kind::In(elem) })
        }
        Type::Path(tp) => {
            let segments: Vec<&syn::PathSegment> = tp.path.segments.iter().collect();
            let name = segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>();
            if name.len() == 1
                && (PRIMITIVES.contains(&name[0].as_str()) || Some(name[0].as_str()) == type_param)
            {
                return Ok(Kind::Value);
            }
            let view = matches!(name.last().map(String::as_str), Some("Strided" | "StridedMut"));
            if name.first().map(String::as_str) != Some("abi") && !(view && name.len() == 1) {
                return Err(format!(
                    "`{}`: a kernel parameter is a number, the type parameter, a pointer or an `abi::` type (written with its path)",
                    type_string(ty)
                ));
            }
            let last = segments.last().expect("a path has a segment");
            let elem = match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args.args.iter().find_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                }),
                _ => None,
            };
            match (last.ident.to_string().as_str(), elem) {
                ("Strided", Some(elem)) => Ok(Kind::Block(elem)),
                ("StridedMut", Some(elem)) => Ok(Kind::BlockMut(elem)),
                _ => Ok(Kind::Abi),
            }
        }
        _ => Err(format!("`{}` cannot be a kernel parameter", type_string(ty))),
    }
}

fn classify_elem(ty: &Type, type_param: Option<&str>) -> Result<(), String> {
    match ty {
        Type::Path(tp) if tp.path.segments.len() == 1 => {
            let name = tp.path.segments[0].ident.to_string();
            if PRIMITIVES.contains(&name.as_str()) || Some(name.as_str()) == type_param {
                return Ok(());
            }
            Err(format!("a buffer of `{name}`: buffers hold numbers or the type parameter"))
        }
        _ => Err(format!("a buffer of `{}`: buffers hold numbers or the type parameter", type_string(ty))),
    }
}

/// Replaces a generic parameter by a concrete type or value inside a type.
struct Substitute<'a> {
    name: &'a Ident,
    with: Type,
}

impl VisitMut for Substitute<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(tp) = ty
            && tp.qself.is_none()
            && tp.path.is_ident(self.name)
        {
            *ty = self.with.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

fn concrete(ty: &Type, k: &Kernel, v: &Variant) -> Type {
    let mut ty = ty.clone();
    if let Some((i, name, values)) = k.type_param() {
        Substitute { name, with: values[v.choice[i]].clone() }.visit_type_mut(&mut ty);
    }
    ty
}

/// The device side: `extern "ptx-kernel"` entry points calling the declared functions.
pub fn entry_points(kernels: &[Kernel]) -> String {
    let mut out = TokenStream::new();
    for k in kernels {
        let cfgs = &k.cfgs;
        let segments: Vec<Ident> = k.module.iter().map(|m| format_ident!("{m}")).collect();
        let body = format_ident!("{}", k.name);
        let names: Vec<&Ident> = k.params.iter().map(|p| &p.name).collect();
        for v in k.variants() {
            let entry = format_ident!("{}", k.entry_name(&v));
            let types: Vec<Type> = k.params.iter().map(|p| concrete(&p.ty, k, &v)).collect();
            let args = k.generic_args(&v);
            let turbofish = if args.is_empty() { quote!() } else { quote!(::<#(#args),*>) };
            out.extend(quote! {
                #(#[cfg(#cfgs)])*
                #[unsafe(no_mangle)]
                pub unsafe extern "ptx-kernel" fn #entry(#(#names: #types),*) {
                    // SAFETY: launched by the host's typed launcher of this declaration, with
                    // its arguments.
                    unsafe { crate::#(#segments::)*#body #turbofish(#(#names),*) }
                }
            });
        }
    }
    // The views may be written bare in a declaration; the entry points sit at the crate root.
    let header = "// Generated by declare::entry_points from the #[gpu::kernel] declarations. Do not edit.\n\
                  #[allow(unused_imports)]\nuse abi::{Strided, StridedMut};\n";
    format!("{header}{out}")
}

/// The host side: a module tree mirroring the kernels crate's, with one typed launcher per
/// kernel. The generated code uses the items of `crate::kernels::support`, `Scalar` (the
/// host's f32-or-f64 trait with a `NAME`) among them.
pub fn launchers(kernels: &[Kernel]) -> String {
    let mut tree = Tree::default();
    for k in kernels {
        let mut node = &mut tree;
        for m in &k.module {
            node = node.children.entry(m.clone()).or_default();
        }
        node.kernels.push(launcher(k));
    }
    let header = "// Generated by declare::launchers from the #[gpu::kernel] declarations. Do not edit.\n";
    format!("{header}{}", tree.emit(true))
}

#[derive(Default)]
struct Tree {
    children: BTreeMap<String, Tree>,
    kernels: Vec<TokenStream>,
}

impl Tree {
    fn emit(&self, root: bool) -> TokenStream {
        let mut out = TokenStream::new();
        if !root {
            out.extend(quote!(
                #[allow(unused_imports)]
                use crate::kernels::support::*;
            ));
        }
        for k in &self.kernels {
            out.extend(k.clone());
        }
        for (name, child) in &self.children {
            let ident = format_ident!("{name}");
            let inner = child.emit(false);
            let doc = format!("Launchers of `kernels/src/{}`.", name);
            out.extend(quote! {
                #[doc = #doc]
                pub mod #ident { #inner }
            });
        }
        out
    }
}

fn launcher(k: &Kernel) -> TokenStream {
    let name = format_ident!("{}", k.name);

    // Signature: the queue, the launch shape, the const parameters' values, the kernel's own.
    let mut generics = vec![quote!('q)];
    let mut sig = vec![quote!(queue: impl Into<Queue<'q>>), quote!(launch: Launch)];
    let mut helper_items = Vec::new();
    for g in &k.generics {
        match g {
            Generic::Type { name: t, values } => {
                if is_scalar_set(values) {
                    generics.push(quote!(#t: Scalar));
                    continue;
                }
                generics.push(quote!(#t: #name::Type));
                let names = values.iter().map(type_string);
                let doc = format!("The element types `{}` is built for.", k.path());
                helper_items.push(quote! {
                    #[doc = #doc]
                    pub trait Type: DeviceRepr + Copy {
                        #[doc(hidden)]
                        const NAME: &'static str;
                    }
                    #(impl Type for #values { const NAME: &'static str = #names; })*
                });
            }
            Generic::Const { name: c, ty, values } => {
                let arg = format_ident!("{}", c.to_string().to_lowercase());
                sig.push(quote!(#arg: #ty));
                let n = values.len();
                let values = values.iter().map(ConstValue::tokens);
                let doc = format!("The values of `{c}` that `{}` is built for.", k.path());
                helper_items.push(quote! {
                    #[doc = #doc]
                    pub const #c: [#ty; #n] = [#(#values),*];
                });
            }
        }
    }
    let mut locals = Vec::new();
    let mut pushes = Vec::new();
    for Param { name: pname, ty, kind } in &k.params {
        let local = format_ident!("arg_{}", pname);
        // The parameter in the signature, the local it becomes, and what is pushed of it.
        let (param, value, push) = match kind {
            Kind::Value => (quote!(#ty), quote!(#pname), quote!(&#local)),
            Kind::Abi => (quote!(#ty), quote!(ByValue(#pname)), quote!(&#local)),
            Kind::In(elem) => {
                (quote!(&impl DevicePtr<#elem>), quote!(#pname.device_ptr(stream)), quote!(&#local.0))
            }
            Kind::Out(elem) => (
                quote!(&mut impl DevicePtrMut<#elem>),
                quote!(#pname.device_ptr_mut(stream)),
                quote!(&#local.0),
            ),
            Kind::Block(elem) => {
                (quote!(MatrixView<'_, #elem>), quote!(ByValue(#pname.strided())), quote!(&#local))
            }
            Kind::BlockMut(elem) => {
                (quote!(MatrixViewMut<'_, #elem>), quote!(ByValue(#pname.strided_mut())), quote!(&#local))
            }
        };
        sig.push(quote!(#pname: #param));
        locals.push(quote!(let #local = #value;));
        pushes.push(quote!(.arg(#push)));
    }

    // The entry point for the chosen values.
    let path = k.path();
    let variants = k.variants();
    let select = if k.generics.is_empty() {
        let entry = k.entry_name(&variants[0]);
        quote!(let entry = #entry;)
    } else {
        let keys: Vec<TokenStream> = k
            .generics
            .iter()
            .map(|g| match g {
                Generic::Type { name: t, values } if is_scalar_set(values) => quote!(<#t as Scalar>::NAME),
                Generic::Type { name: t, .. } => quote!(<#t as #name::Type>::NAME),
                Generic::Const { name: c, .. } => {
                    let arg = format_ident!("{}", c.to_string().to_lowercase());
                    quote!(#arg)
                }
            })
            .collect();
        let arms = variants.iter().map(|v| {
            let entry = k.entry_name(v);
            let pats = k.generics.iter().zip(&v.choice).map(|(g, &i)| match g {
                Generic::Type { values, .. } => {
                    let name = type_string(&values[i]);
                    quote!(#name)
                }
                Generic::Const { values, .. } => values[i].tokens(),
            });
            quote!((#(#pats,)*) => #entry,)
        });
        // Every generic parameter and its value in the message: e.g. "W = 3 (built for 2, 4)".
        let message = k
            .generics
            .iter()
            .map(|g| {
                let values: Vec<String> = match g {
                    Generic::Type { values, .. } => values.iter().map(type_string).collect(),
                    Generic::Const { values, .. } => values.iter().map(ConstValue::display).collect(),
                };
                format!("{} = {{}} (built for {})", g.name(), values.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let message = format!("{path}: no entry point for {message}");
        quote! {
            let entry = match (#(#keys,)*) {
                #(#arms)*
                #[allow(unreachable_patterns)]
                _ => return Err(Error::InvalidInput(format!(#message, #(#keys),*))),
            };
        }
    };

    let entries: Vec<String> = variants.iter().map(|v| format!("`{}`", k.entry_name(v))).collect();
    let mut doc: Vec<String> = k.docs.iter().map(|d| strip_links(d)).collect();
    doc.push(String::new());
    doc.push(format!(
        " Device code: `{}` in `kernels/src/{}`; entry points {}.",
        k.name,
        k.file.display(),
        entries.join(", ")
    ));
    if !k.cfgs.is_empty() {
        let cfgs: Vec<String> = k.cfgs.iter().map(|c| c.to_string()).collect();
        doc.push(format!(
            " Built only where `{}` (else the launch fails with KernelNotFound).",
            cfgs.join(", ")
        ));
    }
    doc.push(String::new());
    doc.push(" # Safety".into());
    doc.push(" The [launch contract](crate::kernels#safety): buffers as large as the kernel indexes them for these arguments.".into());
    let span = Span::call_site();
    let doc: Vec<syn::LitStr> = doc.iter().map(|d| syn::LitStr::new(d, span)).collect();
    let helper = if helper_items.is_empty() {
        quote!()
    } else {
        let doc = format!("The values `{path}` is built for.");
        quote! {
            #[doc = #doc]
            pub mod #name {
                #[allow(unused_imports)]
                use crate::kernels::support::*;
                #(#helper_items)*
            }
        }
    };
    quote! {
        #helper
        #(#[doc = #doc])*
        #[allow(clippy::too_many_arguments, unused_variables)]
        pub unsafe fn #name<#(#generics),*>(#(#sig),*) -> Result<()> {
            #select
            let queue: Queue<'q> = queue.into();
            let kernel = queue.gpu().kernel(entry)?;
            let stream = queue.stream();
            #(#locals)*
            // SAFETY: the arguments are the declaration's, in its order and with its types;
            // the values are the caller's contract.
            unsafe { queue.launch(&kernel, launch, |args| { args #(#pushes)*; }) }
        }
    }
}

/// Whether a type parameter takes exactly `f32` and `f64`: the launcher is then generic over
/// the host's `Scalar` (only f32 and f64 implement it), so generic host code can call it.
fn is_scalar_set(values: &[Type]) -> bool {
    let mut names: Vec<String> = values.iter().map(type_string).collect();
    names.sort();
    names == ["f32", "f64"]
}

/// Doc text without intra-doc links (they point into the kernels crate).
fn strip_links(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else { break };
        let inner = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        let after = &rest[close + 1..];
        if after.starts_with('(')
            && let Some(end) = after.find(')')
        {
            out.push_str(inner);
            rest = &after[end + 1..];
        } else if inner.starts_with('`') {
            out.push_str(inner);
            rest = after;
        } else {
            // Not a link (`x[i]`): escaped, so rustdoc does not take it for one.
            out.push_str("\\[");
            out.push_str(inner);
            out.push_str("\\]");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn type_string(ty: &impl quote::ToTokens) -> String {
    quote!(#ty).to_string().replace(' ', "")
}

/// `DoneFlags` -> `done_flags`, `f64` -> `f64`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() || c == '_' {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_source(source: &str) -> Result<Vec<Kernel>, String> {
        // A folder per call: the tests run in parallel.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("declare-test-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.rs"), "pub mod spmv;").unwrap();
        std::fs::write(dir.join("spmv.rs"), source).unwrap();
        let result = scan(&dir.join("lib.rs"));
        std::fs::remove_dir_all(&dir).unwrap();
        result
    }

    const VECTOR: &str = "
        /// Doc with a [`link`] and [text](path).
        #[gpu::kernel(W = 2 | 4, T = f32 | f64)]
        pub unsafe fn vector<T: Float, const W: u32>(rows: u32, x: *const T, y: *mut T, b: abi::Strided<T>) {}
        #[gpu::kernel]
        pub unsafe fn spmv(n: u32) {}
        #[gpu::kernel(S = abi::spmv::ONE | abi::spmv::TWO)]
        pub unsafe fn signal<const S: u32>(n: u32) {}
    ";

    #[test]
    fn names_every_variant() {
        let kernels = scan_source(VECTOR).unwrap();
        let names: Vec<String> = kernels[0].variants().iter().map(|v| kernels[0].entry_name(v)).collect();
        assert_eq!(
            names,
            ["spmv_vector_w2_f32", "spmv_vector_w4_f32", "spmv_vector_w2_f64", "spmv_vector_w4_f64"]
        );
        // A function named like its module is the module's kernel.
        assert_eq!(kernels[1].entry_name(&kernels[1].variants()[0]), "spmv");
        // An `abi::` constant is named by its own name.
        assert_eq!(kernels[2].entry_name(&kernels[2].variants()[1]), "spmv_signal_two");
    }

    #[test]
    fn entry_points_substitute_the_type() {
        let code = entry_points(&scan_source(VECTOR).unwrap());
        assert!(code.contains("fn spmv_vector_w4_f64 (rows : u32 , x : * const f64 , y : * mut f64 , b : abi :: Strided < f64 >)"), "{code}");
        assert!(code.contains("crate :: spmv :: vector :: < f64 , 4 > (rows , x , y , b)"), "{code}");
    }

    #[test]
    fn launchers_take_buffers_and_views() {
        let code = launchers(&scan_source(VECTOR).unwrap());
        assert!(code.contains("x : & impl DevicePtr < T >"), "{code}");
        assert!(code.contains("y : & mut impl DevicePtrMut < T >"), "{code}");
        assert!(code.contains("b : MatrixView < '_ , T >"), "{code}");
        assert!(code.contains("pub const W : [u32 ; 2usize] = [2 , 4]"), "{code}");
        assert!(code.contains("Doc with a `link` and text."), "{code}");
    }

    #[test]
    fn writes_the_declared_launch_directives() {
        let kernels = scan_source(
            "#[gpu::kernel(T = f32 | f64)] #[gpu::max_threads(384)] #[gpu::cluster(2)] pub unsafe fn wide<T: Float>(n: u32) {}
             #[gpu::kernel] #[gpu::max_threads(128)] #[gpu::min_blocks(16)] pub unsafe fn narrow(n: u32) {}",
        )
        .unwrap();
        let ptx = ".visible .entry spmv_wide_f32(\n\t.param .u32 p\n)\n{\n\tret;\n}\n\
                   .visible .entry spmv_narrow(\n\t.param .u32 p\n)\n{\n\tret;\n}\n";
        let bounded = launch_directives(&kernels, ptx);
        assert_eq!(
            bounded,
            ".visible .entry spmv_wide_f32(\n\t.param .u32 p\n)\n.maxntid 384, 1, 1\n.reqnctapercluster 2, 1, 1\n{\n\tret;\n}\n\
             .visible .entry spmv_narrow(\n\t.param .u32 p\n)\n.maxntid 128, 1, 1\n.minnctapersm 16\n{\n\tret;\n}\n"
        );
        let err =
            scan_source("#[gpu::kernel] #[gpu::max_threads(2048)] pub unsafe fn k(n: u32) {}").err().unwrap();
        assert!(err.contains("from 1 to 1024"), "{err}");
    }

    #[test]
    fn refuses_what_it_cannot_launch() {
        let err = scan_source("#[gpu::kernel] pub unsafe fn k(x: *const Foo) {}").err().unwrap();
        assert!(err.contains("buffers hold numbers"), "{err}");
        let err = scan_source("#[gpu::kernel] pub unsafe fn k<T: Float>(x: *const T) {}").err().unwrap();
        assert!(err.contains("no values"), "{err}");
        let err = scan_source("#[gpu::kernel] pub unsafe fn k(plan: Plan) {}").err().unwrap();
        assert!(err.contains("abi::"), "{err}");
    }
}
