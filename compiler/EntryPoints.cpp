#include "EntryPoints.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#include <array>
#include <set>

using namespace llvm;

namespace msl::compiler {
namespace {

using Vec3 = std::array<Value *, 3>;

// The launch vectors every built-in is derived from: the thread's position
// in its threadgroup (tid), this threadgroup's size (ntid: smaller than
// `dispatched` for the partial edge threadgroups of dispatchThreads), the
// threadgroup's position (ctaid), the threadgroups of the grid (nctaid), the
// uniform threadgroup size of the dispatch (dispatched) and the threads of
// the grid (grid). On NVPTX the entry's last parameter, the launch block,
// gives all but tid and ntid (see nvptxGeometry).
struct Geometry {
  Vec3 tid, ntid, ctaid, nctaid;
  Vec3 dispatched{}, grid{};
};

// SIMD-groups are 32 threads on both targets: a warp, and on the CPU 32
// consecutive work-items of the work-group function (executor/
// WorkGroupFunction.h kSimdWidth), as on Apple GPUs.
constexpr unsigned kNvptxSimdWidth = 32;
constexpr unsigned kCpuSimdWidth = 32;

// The built-ins' inputs on NVPTX: %tid and %ntid (a launch's blocks are
// exactly its threadgroups, partial edge ones too: the host launches the
// edges of dispatchThreads separately, each with its own block size), and
// from the launch block (kNvptxLaunchWords uint32, byval): the first
// threadgroup's position of this launch, added to %ctaid; the dispatch's
// uniform threadgroup size; the threads of the grid; its threadgroups.
constexpr unsigned kNvptxLaunchWords = 12;

Geometry nvptxGeometry(IRBuilder<> &b, Value *launch) {
  Module *m = b.GetInsertBlock()->getModule();
  auto read = [&](Intrinsic::ID id) { return b.CreateCall(Intrinsic::getDeclaration(m, id)); };
  Type *i32 = b.getInt32Ty();
  auto word = [&](unsigned i) { return b.CreateLoad(i32, b.CreateConstInBoundsGEP1_32(i32, launch, i)); };
  const Intrinsic::ID tid[3] = {Intrinsic::nvvm_read_ptx_sreg_tid_x, Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                Intrinsic::nvvm_read_ptx_sreg_tid_z};
  const Intrinsic::ID ntid[3] = {Intrinsic::nvvm_read_ptx_sreg_ntid_x, Intrinsic::nvvm_read_ptx_sreg_ntid_y,
                                 Intrinsic::nvvm_read_ptx_sreg_ntid_z};
  const Intrinsic::ID ctaid[3] = {Intrinsic::nvvm_read_ptx_sreg_ctaid_x, Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                  Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  Geometry g;
  for (unsigned c = 0; c < 3; ++c) {
    g.tid[c] = read(tid[c]);
    g.ntid[c] = read(ntid[c]);
    g.ctaid[c] = b.CreateAdd(read(ctaid[c]), word(c));
    g.dispatched[c] = word(3 + c);
    g.grid[c] = word(6 + c);
    g.nctaid[c] = word(9 + c);
  }
  return g;
}

Geometry cpuGeometry(IRBuilder<> &b, Value *launch) {
  Type *i32 = b.getInt32Ty();
  auto at = [&](unsigned i) {
    return b.CreateLoad(i32, b.CreateConstInBoundsGEP1_32(i32, launch, i));
  };
  Geometry g;
  for (unsigned c = 0; c < 3; ++c) {
    g.tid[c] = at(c);
    g.ctaid[c] = at(3 + c);
    g.ntid[c] = at(6 + c);
    g.nctaid[c] = at(9 + c);
    g.dispatched[c] = at(12 + c);
    g.grid[c] = at(15 + c);
  }
  return g;
}

// Value of built-in `name` as three 32-bit components (scalars use [0]).
std::optional<Vec3> builtinValue(IRBuilder<> &b, const Geometry &g, const std::string &name,
                                 unsigned simdWidth) {
  Value *zero = b.getInt32(0);
  auto map2 = [&](auto op) {
    Vec3 r;
    for (unsigned c = 0; c < 3; ++c)
      r[c] = op(c);
    return r;
  };
  auto scalar = [&](Value *v) { return Vec3{v, zero, zero}; };
  auto flatIndex = [&] {
    return b.CreateAdd(g.tid[0],
                       b.CreateMul(g.ntid[0], b.CreateAdd(g.tid[1], b.CreateMul(g.ntid[1], g.tid[2]))));
  };
  auto threadsInGroup = [&] { return b.CreateMul(b.CreateMul(g.ntid[0], g.ntid[1]), g.ntid[2]); };
  auto dispatchedThreads = [&] {
    return b.CreateMul(b.CreateMul(g.dispatched[0], g.dispatched[1]), g.dispatched[2]);
  };
  auto ceilDiv = [&](Value *v, unsigned d) {
    return b.CreateUDiv(b.CreateAdd(v, b.getInt32(d - 1)), b.getInt32(d));
  };

  if (name == "thread_position_in_grid")
    return map2([&](unsigned c) { return b.CreateAdd(b.CreateMul(g.ctaid[c], g.dispatched[c]), g.tid[c]); });
  if (name == "thread_position_in_threadgroup")
    return g.tid;
  if (name == "threadgroup_position_in_grid")
    return g.ctaid;
  if (name == "threads_per_grid" || name == "grid_size")
    return g.grid[0] ? g.grid : map2([&](unsigned c) { return b.CreateMul(g.nctaid[c], g.ntid[c]); });
  if (name == "threads_per_threadgroup")
    return g.ntid;
  if (name == "dispatch_threads_per_threadgroup")
    return g.dispatched;
  if (name == "threadgroups_per_grid")
    return g.nctaid;
  if (name == "grid_origin")
    return Vec3{zero, zero, zero};
  if (name == "thread_index_in_threadgroup")
    return scalar(flatIndex());
  if (name == "thread_execution_width" || name == "threads_per_simdgroup")
    return scalar(b.getInt32(simdWidth));
  if (name == "thread_index_in_simdgroup")
    return scalar(b.CreateURem(flatIndex(), b.getInt32(simdWidth)));
  if (name == "simdgroup_index_in_threadgroup")
    return scalar(b.CreateUDiv(flatIndex(), b.getInt32(simdWidth)));
  if (name == "simdgroups_per_threadgroup")
    return scalar(ceilDiv(threadsInGroup(), simdWidth));
  if (name == "dispatch_simdgroups_per_threadgroup")
    return scalar(ceilDiv(dispatchedThreads(), simdWidth));
  if (name == "thread_index_in_quadgroup")
    return scalar(b.CreateURem(flatIndex(), b.getInt32(4)));
  if (name == "quadgroup_index_in_threadgroup")
    return scalar(b.CreateUDiv(flatIndex(), b.getInt32(4)));
  if (name == "quadgroups_per_threadgroup")
    return scalar(ceilDiv(threadsInGroup(), 4));
  if (name == "dispatch_quadgroups_per_threadgroup")
    return scalar(ceilDiv(dispatchedThreads(), 4));
  return std::nullopt;
}

// Shapes three i32 components into the body's parameter type: i16/i32
// scalars and vectors, or whatever the ABI coerced them to (reinterpreted
// through memory, which is what the coercion means).
Value *shapeTo(IRBuilder<> &b, const Vec3 &v, Type *paramType, unsigned width, Type *elemType,
               AllocaInst *&scratch) {
  Value *logical;
  if (width == 1) {
    logical = b.CreateZExtOrTrunc(v[0], elemType);
  } else {
    logical = PoisonValue::get(FixedVectorType::get(elemType, width));
    for (unsigned c = 0; c < width; ++c)
      logical = b.CreateInsertElement(logical, b.CreateZExtOrTrunc(v[c], elemType), c);
  }
  if (logical->getType() == paramType)
    return logical;
  // ABI coercion: go through a stack slot big enough for both.
  if (!scratch) {
    IRBuilder<> entry(&b.GetInsertBlock()->getParent()->getEntryBlock(),
                      b.GetInsertBlock()->getParent()->getEntryBlock().begin());
    scratch = entry.CreateAlloca(ArrayType::get(b.getInt8Ty(), 32));
  }
  b.CreateStore(Constant::getNullValue(ArrayType::get(b.getInt8Ty(), 32)), scratch);
  b.CreateStore(logical, scratch);
  return b.CreateLoad(paramType, scratch);
}

// Drops the nvvm.annotations of the functions in `fs` (Clang's "kernel"
// marks), in one pass for all of them: one pass per function made a file
// of N kernels O(N^2) on NVPTX.
void removeNvvmAnnotations(Module &m, const SmallPtrSetImpl<const Function *> &fs) {
  NamedMDNode *md = m.getNamedMetadata("nvvm.annotations");
  if (!md || fs.empty())
    return;
  std::vector<MDNode *> keep;
  for (MDNode *n : md->operands()) {
    auto *v = n->getNumOperands() ? dyn_cast_or_null<ValueAsMetadata>(n->getOperand(0)) : nullptr;
    if (!v || !fs.count(dyn_cast<Function>(v->getValue())))
      keep.push_back(n);
  }
  if (keep.size() == md->getNumOperands())
    return;
  md->clearOperands();
  for (MDNode *n : keep)
    md->addOperand(n);
}

void lowerBarrierHooks(Module &m, Arch arch) {
  if (arch != Arch::NVPTX64)
    return; // the CPU runtime provides __msl_*_barrier
  struct Hook {
    const char *name;
    Intrinsic::ID id;
    bool takesMask;
  };
  for (Hook h : {Hook{"__msl_threadgroup_barrier", Intrinsic::nvvm_barrier0, false},
                 Hook{"__msl_simdgroup_barrier", Intrinsic::nvvm_bar_warp_sync, true}}) {
    Function *hook = m.getFunction(h.name);
    if (!hook)
      continue;
    Function *intrinsic = Intrinsic::getDeclaration(&m, h.id);
    for (User *u : make_early_inc_range(hook->users())) {
      auto *call = dyn_cast<CallInst>(u);
      if (!call)
        continue;
      IRBuilder<> b(call);
      if (h.takesMask)
        b.CreateCall(intrinsic, {b.getInt32(0xffffffffu)});
      else
        b.CreateCall(intrinsic);
      call->eraseFromParent();
    }
    if (hook->use_empty())
      hook->eraseFromParent();
  }
}

// The AnnotateAttrs that carry MSL attributes become llvm.var.annotation
// calls on parameter slots, llvm.ptr.annotation calls on every access to an
// attributed struct member, and llvm.global.annotations entries. They have
// served their purpose (the reflection) and would keep values from being
// promoted to registers, so they go.
void stripAnnotations(Module &m) {
  for (Function &f : make_early_inc_range(m.functions())) {
    bool isVar = f.getName().starts_with("llvm.var.annotation");
    bool isPtr = f.getName().starts_with("llvm.ptr.annotation");
    if (!isVar && !isPtr)
      continue;
    for (User *u : make_early_inc_range(f.users()))
      if (auto *call = dyn_cast<CallInst>(u)) {
        if (isPtr)
          call->replaceAllUsesWith(call->getArgOperand(0));
        call->eraseFromParent();
      }
    if (f.use_empty())
      f.eraseFromParent();
  }
  if (GlobalVariable *g = m.getGlobalVariable("llvm.global.annotations"))
    g->eraseFromParent();
}

// A texture or sampler handle (i64) as the body's parameter type, which the
// ABI may have made an integer, a struct or a pointer to a byval copy.
Value *handleAsParam(IRBuilder<> &b, Value *handle, Type *paramType) {
  if (paramType->isIntegerTy())
    return b.CreateZExtOrTrunc(handle, paramType);
  if (auto *st = dyn_cast<StructType>(paramType))
    return b.CreateInsertValue(PoisonValue::get(st), handle, 0);
  AllocaInst *copy = b.CreateAlloca(handle->getType());
  b.CreateStore(handle, copy);
  return copy;
}

// A value of type `valueType` at `source` as the body's parameter type: a
// pointer to a byval copy, or the value itself (possibly ABI-coerced).
Value *memoryAsParam(IRBuilder<> &b, Value *source, Type *valueType, Type *paramType) {
  if (!paramType->isPointerTy())
    return b.CreateLoad(paramType, source);
  const DataLayout &dl = b.GetInsertBlock()->getModule()->getDataLayout();
  AllocaInst *copy = b.CreateAlloca(valueType);
  b.CreateMemCpy(copy, copy->getAlign(), source, dl.getABITypeAlign(valueType),
                 dl.getTypeAllocSize(valueType));
  return copy;
}

// A kernel's [[stage_in]] argument: the entry gets a pointer to one input
// struct per thread of the grid (the host has fetched them), and this
// thread's is the one at its linear position in the grid.
Value *stageInAsParam(IRBuilder<> &b, const Geometry &g, Value *base, Function *body, unsigned arg) {
  Type *paramType = body->getArg(arg)->getType();
  Type *structType = body->getParamByValType(arg) ? body->getParamByValType(arg) : paramType;
  auto pos = builtinValue(b, g, "thread_position_in_grid", 1);
  auto size = builtinValue(b, g, "threads_per_grid", 1);
  Value *linear = b.CreateAdd((*pos)[0], b.CreateMul((*size)[0], b.CreateAdd((*pos)[1],
                                                          b.CreateMul((*size)[1], (*pos)[2]))));
  Value *element = b.CreateGEP(structType, base, b.CreateZExt(linear, b.getInt64Ty()));
  return memoryAsParam(b, element, structType, paramType);
}

} // namespace

std::string lowerEntryPoints(Module &m, const std::vector<ShaderFunction> &functions, Arch arch) {
  std::vector<const ShaderFunction *> kernels;
  // Functions whose nvvm.annotations go (removed together, after the loop:
  // the entries' own annotations, appended meanwhile, stay after the rest).
  SmallPtrSet<const Function *, 16> unannotated;
  for (const auto &f : functions)
    if (f.stage == Stage::Kernel)
      kernels.push_back(&f);
    else if (Function *fn = m.getFunction(f.symbol); fn && isGridStage(f.stage)) {
      // Object and mesh functions carry Clang's kernel mark (see
      // Attributes.cpp) but get no entry yet: plain functions, like vertex
      // and fragment ones.
      fn->setCallingConv(CallingConv::C);
      unannotated.insert(fn);
    }
  LLVMContext &ctx = m.getContext();
  const bool nvptx = arch == Arch::NVPTX64;
  GlobalVariable *sharedMemory = nullptr;
  if (nvptx)
    for (const auto *k : kernels)
      for (const auto &a : k->args)
        if (a.kind == ArgKind::Threadgroup && !sharedMemory)
          sharedMemory = new GlobalVariable(
              m, ArrayType::get(Type::getInt8Ty(ctx), 0), false, GlobalValue::ExternalLinkage,
              nullptr, "__msl_threadgroup_memory", nullptr, GlobalValue::NotThreadLocal, 3);
  if (sharedMemory)
    sharedMemory->setAlignment(Align(16));

  for (const auto *kp : kernels) {
    const ShaderFunction &k = *kp;
    Function *body = m.getFunction(k.symbol);
    if (!body || body->isDeclaration())
      return "kernel '" + k.name + "' was not emitted as '" + k.symbol + "'";
    if (body->arg_size() != k.args.size())
      return "kernel '" + k.name + "' has " + std::to_string(body->arg_size()) +
             " IR parameters for " + std::to_string(k.args.size()) + " arguments";
    body->setName(k.symbol + ".msl.body");
    body->setLinkage(GlobalValue::InternalLinkage);
    body->setCallingConv(CallingConv::C);
    body->removeFnAttr(Attribute::NoInline);
    body->removeFnAttr(Attribute::OptimizeNone);
    body->addFnAttr(Attribute::AlwaysInline);
    unannotated.insert(body);

    // Entry parameters: NVPTX gets buffers and threadgroup offsets; the CPU
    // entry gets (ptr args, ptr launch).
    std::vector<Type *> params;
    std::vector<std::pair<unsigned, unsigned>> constantBuffers; // (entry parameter, argument) of `constant` buffers
    std::vector<std::pair<unsigned, unsigned>> buffers;         // (entry parameter, argument) of all buffers
    if (nvptx) {
      for (unsigned i = 0; i < k.args.size(); ++i) {
        if (k.args[i].handle) {
          // One 64-bit handle, or a pointer to an array's handles.
          params.push_back(k.args[i].arrayLength ? static_cast<Type *>(PointerType::get(ctx, 0))
                                                 : Type::getInt64Ty(ctx));
          continue;
        }
        switch (k.args[i].kind) {
        case ArgKind::Buffer:
          if (k.args[i].addressSpace == "constant" && body->getArg(i)->getType()->isPointerTy())
            constantBuffers.push_back({unsigned(params.size()), i});
          if (body->getArg(i)->getType()->isPointerTy())
            buffers.push_back({unsigned(params.size()), i});
          params.push_back(body->getArg(i)->getType());
          break;
        case ArgKind::Threadgroup:
          params.push_back(Type::getInt32Ty(ctx));
          break;
        case ArgKind::Texture:
        case ArgKind::Sampler:
          break; // handles (above)
        case ArgKind::StageIn:
          params.push_back(PointerType::get(ctx, 0));
          break;
        case ArgKind::Builtin:
          break;
        }
      }
      params.push_back(PointerType::get(ctx, 0)); // the launch block, byval
    } else {
      params = {PointerType::get(ctx, 0), PointerType::get(ctx, 0)};
    }
    // (Another global of that name, such as a program-scope constant, would
    // make LLVM rename the entry silently.)
    if (m.getNamedValue(entrySymbol(k)))
      return "kernel '" + k.name + "': its entry name '" + entrySymbol(k) + "' is already taken";
    Function *entry = Function::Create(FunctionType::get(Type::getVoidTy(ctx), params, false),
                                       GlobalValue::ExternalLinkage, entrySymbol(k), m);
    entry->copyAttributesFrom(body);
    entry->setLinkage(GlobalValue::ExternalLinkage);
    entry->removeFnAttr(Attribute::AlwaysInline);
    entry->setAttributes(AttributeList::get(ctx, entry->getAttributes().getFnAttrs(), {}, {}));
    if (nvptx) {
      Argument *launch = entry->getArg(entry->arg_size() - 1);
      Type *launchType = ArrayType::get(Type::getInt32Ty(ctx), kNvptxLaunchWords);
      launch->addAttr(Attribute::getWithByValType(ctx, launchType));
      launch->addAttr(Attribute::getWithAlignment(ctx, Align(4)));
      launch->setName("launch");
      // A buffer is as aligned as Metal requires its binding offset to be
      // (CUDA allocations are 256-byte aligned): to its type (`device uchar
      // *`: 1, `device uint *` and `device uchar4 *`: 4; at most 16), and a
      // `constant` one to 4 bytes at least (iOS: the larger of the type's
      // alignment and 4; macOS: 256). What the optimizer proves from it
      // decides how wide loads of char vectors are (relaxByteVectorAlignment):
      // a uchar4 at 4-byte steps from `constant uchar *` or `device uint *`
      // stays one 32-bit load, from `device uchar *` (any offset) it is four.
      for (auto [param, arg] : buffers) {
        const ShaderArg &a = k.args[arg];
        uint64_t align = std::min<uint64_t>(16, std::max<uint64_t>(a.typeAlign, a.addressSpace == "constant" ? 4 : 1));
        if (align > 1 && isPowerOf2_64(align))
          entry->getArg(param)->addAttr(Attribute::getWithAlignment(ctx, Align(align)));
      }
      // A `constant` buffer is read-only for the whole dispatch (MSL 4.2:
      // constant memory is not written while a kernel runs; a device buffer
      // bound over it too may not write it): noalias + readonly, as CUDA's
      // `const T *__restrict__`. Its loads then are invariant: the optimizer
      // keeps `constant uint &n` in a register across barriers and stores
      // instead of reloading it after each (SGEMM's loop bound was read
      // again after every barrier: 359.5 -> 348.3 us on the H200,
      // bench/RESULTS.md), and NVPTX reads it with ld.global.nc. A present
      // `constant T &` is also dereferenceable for sizeof(T) (Execute
      // refuses a smaller binding: ExecuteService.cpp), which lets the
      // optimizer speculate such a load.
      for (auto [param, arg] : constantBuffers) {
        entry->getArg(param)->addAttr(Attribute::NoAlias);
        entry->getArg(param)->addAttr(Attribute::ReadOnly);
        const ShaderArg &a = k.args[arg];
        if (a.isReference && a.present && a.typeSize > 0)
          entry->getArg(param)->addAttr(Attribute::getWithDereferenceableBytes(ctx, a.typeSize));
      }
    }
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", entry));
    Geometry g = nvptx ? nvptxGeometry(b, entry->getArg(entry->arg_size() - 1)) : cpuGeometry(b, entry->getArg(1));
    unsigned simdWidth = nvptx ? kNvptxSimdWidth : kCpuSimdWidth;

    std::vector<Value *> callArgs;
    unsigned nextParam = 0, nextSlot = 0;
    AllocaInst *scratch = nullptr;
    for (unsigned i = 0; i < k.args.size(); ++i) {
      const ShaderArg &a = k.args[i];
      Type *paramType = body->getArg(i)->getType();
      if (a.kind == ArgKind::Builtin) {
        auto v = builtinValue(b, g, a.builtin, simdWidth);
        if (!v)
          return "unknown built-in '" + a.builtin + "'";
        // The source type decides the shape; the IR type may be ABI-coerced.
        unsigned width = a.builtinWidth;
        Type *elem = b.getIntNTy(a.builtinBits);
        callArgs.push_back(shapeTo(b, *v, paramType, width, elem, scratch));
      } else {
        bool resource = a.handle;
        bool handleArray = resource && a.arrayLength;
        bool stageIn = a.kind == ArgKind::StageIn;
        Value *p;
        if (nvptx) {
          p = entry->getArg(nextParam++);
        } else {
          Value *slot = b.CreateConstInBoundsGEP1_32(PointerType::get(ctx, 0), entry->getArg(0),
                                                     nextSlot++);
          Type *slotType = handleArray || stageIn ? PointerType::get(ctx, 0)
                           : resource             ? b.getInt64Ty()
                                                  : paramType;
          p = b.CreateLoad(slotType, slot);
          // A present `constant T &` points at sizeof(T) readable bytes
          // (Execute binds no less), aligned for T: said on the slot's load,
          // so that the optimizer may read it where the source reads it only
          // under a condition. The work-item loops then read it once as a
          // uniform value, not per item under the item's condition (saxpy's
          // `a` inside `if (gid < n)` was a masked gather per 8 items:
          // bench/RESULTS.md).
          if (a.kind == ArgKind::Buffer && a.addressSpace == "constant" && a.isReference && a.present &&
              a.typeSize > 0 && paramType->isPointerTy()) {
            auto *load = cast<LoadInst>(p);
            auto bytes = [&](uint64_t n) {
              return MDNode::get(ctx, ConstantAsMetadata::get(b.getInt64(n)));
            };
            load->setMetadata(LLVMContext::MD_dereferenceable, bytes(a.typeSize));
            if (isPowerOf2_64(a.typeAlign))
              load->setMetadata(LLVMContext::MD_align, bytes(a.typeAlign));
            load->setMetadata(LLVMContext::MD_noundef, MDNode::get(ctx, {}));
          }
        }
        if (a.kind == ArgKind::Threadgroup && nvptx)
          p = b.CreateInBoundsGEP(b.getInt8Ty(), sharedMemory, p);
        if (stageIn)
          p = stageInAsParam(b, g, p, body, i);
        else if (handleArray)
          p = memoryAsParam(b, p, ArrayType::get(b.getInt64Ty(), a.arrayLength), paramType);
        else if (resource)
          p = handleAsParam(b, p, paramType);
        callArgs.push_back(p);
      }
    }
    b.CreateCall(body, callArgs);
    b.CreateRetVoid();

    if (nvptx) {
      NamedMDNode *md = m.getOrInsertNamedMetadata("nvvm.annotations");
      md->addOperand(MDNode::get(ctx, {ValueAsMetadata::get(entry), MDString::get(ctx, "kernel"),
                                       ConstantAsMetadata::get(b.getInt32(1))}));
      // [[max_total_threads_per_threadgroup(n)]] lets ptxas budget registers
      // for n threads (.maxntid n, 1, 1).
      for (const auto &attr : k.attributes) {
        llvm::StringRef value(attr);
        unsigned n;
        if (value.consume_front("max_total_threads_per_threadgroup:") && !value.getAsInteger(10, n))
          md->addOperand(MDNode::get(ctx, {ValueAsMetadata::get(entry), MDString::get(ctx, "maxntidx"),
                                           ConstantAsMetadata::get(b.getInt32(n))}));
      }
    }
  }
  removeNvvmAnnotations(m, unannotated);
  lowerBarrierHooks(m, arch);
  stripAnnotations(m);
  // On the GPU only the stage functions are the program's interface (PTX
  // has no linking step here), so every other function becomes internal:
  // the optimizer inlines or drops them, and NVPTX never sees a device
  // function taking a vector by value (LLVM 19 emits invalid PTX, "add"
  // on a .param symbol, when one is indexed dynamically). The CPU module
  // keeps them, for a JIT that links.
  if (nvptx) {
    std::set<std::string> interface;
    for (const auto &f : functions)
      interface.insert(entrySymbol(f));
    for (Function &f : m.functions())
      if (!f.isDeclaration() && !interface.count(f.getName().str()) && !f.hasLocalLinkage())
        f.setLinkage(GlobalValue::InternalLinkage);
  }
  return {};
}

} // namespace msl::compiler
