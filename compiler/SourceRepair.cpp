#include "SourceRepair.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Type.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <tuple>

using namespace clang;

namespace msl::compiler {
namespace {

QualType typeArg(const Diagnostic &info, unsigned i) {
  if (i >= info.getNumArgs() || info.getArgKind(i) != DiagnosticsEngine::ak_qualtype)
    return QualType();
  return QualType::getFromOpaquePtr(reinterpret_cast<void *>(info.getRawArg(i)));
}

bool isVector(QualType t) { return !t.isNull() && t->getAs<ExtVectorType>(); }

// boolN: a vector of plain `char` (see the prelude).
bool isBoolVector(QualType t) {
  const auto *v = t.isNull() ? nullptr : t->getAs<ExtVectorType>();
  return v && (v->getElementType()->isSpecificBuiltinType(BuiltinType::Char_S) ||
               v->getElementType()->isSpecificBuiltinType(BuiltinType::Char_U));
}

// The index just past the bracket that closes the one at `open`.
size_t closing(llvm::StringRef text, size_t open) {
  char o = text[open], c = o == '(' ? ')' : o == '<' ? '>' : o == '[' ? ']' : '}';
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    depth += text[i] == o ? 1 : text[i] == c ? -1 : 0;
    if (depth == 0)
      return i + 1;
  }
  return llvm::StringRef::npos;
}

// Whether `text` is a comparison (`a.x < b`, `(p == q)`): a relational or
// equality operator outside any brackets.
bool isComparison(llvm::StringRef text) {
  text = text.trim();
  while (!text.empty() && text.front() == '(' && closing(text, 0) == text.size())
    text = text.drop_front().drop_back().trim();
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\0';
    char prev = i ? text[i - 1] : '\0';
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (depth == 0 && (c == '=' || c == '!') && next == '=')
      return true;
    else if (depth == 0 && (c == '<' || c == '>') && next != c && prev != c && prev != '-')
      return true;
  }
  return false;
}

// The operand of a logical operator that starts at `from` (operandAfter) or
// ends at `to` (operandBefore): up to the enclosing bracket, a `,`/`;`, or
// another `||`, `&&` or `?`/`:` at the same depth. [begin, end), trimmed.
std::pair<size_t, size_t> trimmed(llvm::StringRef text, size_t b, size_t e) {
  while (b < e && isspace(static_cast<unsigned char>(text[b])))
    ++b;
  while (e > b && isspace(static_cast<unsigned char>(text[e - 1])))
    --e;
  return {b, e};
}
bool endsOperand(llvm::StringRef text, size_t i) {
  llvm::StringRef two = text.substr(i, 2);
  char prev = i ? text[i - 1] : '\0';
  char next = i + 1 < text.size() ? text[i + 1] : '\0';
  if (text[i] == ':' && (prev == ':' || next == ':'))
    return false; // a scope (ns::name), not ?:'s colon
  // `=` alone (not ==, !=, <=, >=; not the second `=` of ==).
  bool assignment = text[i] == '=' && two != "==" && !llvm::StringRef("=!<>").contains(prev);
  return two == "||" || two == "&&" || assignment || text[i] == ',' || text[i] == ';' ||
         text[i] == '?' || text[i] == ':' || text[i] == '{' || text[i] == '}';
}
std::pair<size_t, size_t> operandAfter(llvm::StringRef text, size_t from) {
  int depth = 0;
  size_t i = from;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '[')
      ++depth;
    else if ((c == ')' || c == ']') && --depth < 0)
      break;
    else if (depth == 0 && endsOperand(text, i))
      break;
  }
  return trimmed(text, from, i);
}
std::pair<size_t, size_t> withoutKeyword(llvm::StringRef text, std::pair<size_t, size_t> range) {
  // `return a == b || ...`: the operand starts after the keyword.
  for (llvm::StringRef keyword : {"return", "case", "else", "throw", "co_return"}) {
    llvm::StringRef t = text.substr(range.first, range.second - range.first);
    if (t.starts_with(keyword) && t.size() > keyword.size() &&
        !(isalnum(static_cast<unsigned char>(t[keyword.size()])) || t[keyword.size()] == '_'))
      return trimmed(text, range.first + keyword.size(), range.second);
  }
  return range;
}
std::pair<size_t, size_t> operandBefore(llvm::StringRef text, size_t to) {
  int depth = 0;
  size_t i = to;
  for (; i > 0; --i) {
    char c = text[i - 1];
    if (c == ')' || c == ']')
      ++depth;
    else if ((c == '(' || c == '[') && --depth < 0)
      break;
    else if (depth == 0 && (endsOperand(text, i - 1) || (i >= 2 && endsOperand(text, i - 2) &&
                                                          text[i - 2] == c)))
      break; // a single-character end, or the second character of || or &&
  }
  return withoutKeyword(text, trimmed(text, i, to));
}

// In `TYPE name(...)`, the TYPE text before the name at `name` (an
// identifier, possibly qualified, possibly with one template argument
// list), or nothing when the name is not preceded by a type (`return
// vec<T, 4>(...)`, `= float4(...)`).
std::optional<llvm::StringRef> declaredTypeBefore(llvm::StringRef text, size_t name) {
  llvm::StringRef before = text.substr(0, name).rtrim();
  size_t end = before.size(), i = end;
  if (i && before[i - 1] == '>') {
    int angle = 0;
    for (; i > 0; --i) {
      angle += before[i - 1] == '>' ? 1 : before[i - 1] == '<' ? -1 : 0;
      if (angle == 0)
        break;
    }
    if (i == 0)
      return std::nullopt;
    --i;
  }
  auto isIdent = [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; };
  while (i && isIdent(before[i - 1]))
    --i;
  llvm::StringRef type = before.substr(i, end - i);
  llvm::StringRef word = type.take_while([&](char c) { return isIdent(c); });
  static const char *kNotTypes[] = {"return", "case", "else", "do", "throw", "co_return", "co_yield"};
  if (word.empty() || !(isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_') ||
      llvm::is_contained(kNotTypes, word))
    return std::nullopt;
  // A name, maybe qualified: every ':' is half of a '::' (not ?:'s colon).
  for (size_t k = 0; k < word.size(); ++k)
    if (word[k] == ':' && !(k + 1 < word.size() && word[k + 1] == ':') && !(k && word[k - 1] == ':'))
      return std::nullopt;
  return type;
}

// Kernel templates. For the template whose name is at `name`:
//   template <typename T> kernel void f(ARGS) {BODY}
//     -> template <typename T>        auto f(ARGS) {_Pragma("msl kernel") BODY}
// (`[[kernel]]` may stand for `kernel`), and for each explicit
// instantiation of it in the file:
//   template [[host_name("x")]] kernel void f<float>(PARAMS);
//     ->          [[host_name("x")]] kernel void __MSL_KERNEL_NAME(f)(PARAMS)
//        { f<float>(names of PARAMS); }
// Attributes.cpp (kernel templates) says why this compiles. Lines and the
// template's columns stay; nothing is edited unless every part is found.
namespace {
bool isIdentChar(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Skips spaces, tabs, newlines and macro line continuations.
size_t skipSpace(llvm::StringRef text, size_t i) {
  while (i < text.size() && (isspace(static_cast<unsigned char>(text[i])) ||
                             (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n')))
    ++i;
  return i;
}

// Whether `at` lies in a `#define` (its logical line, across continuations,
// starts with `#define`).
bool inMacroDefinition(llvm::StringRef text, size_t at) {
  size_t start = at;
  while (true) {
    size_t nl = text.rfind('\n', start == 0 ? 0 : start - 1);
    if (nl == llvm::StringRef::npos || start == 0) {
      start = 0;
      break;
    }
    start = nl + 1;
    if (nl == 0 || text[nl - 1] != '\\')
      break;
    start = nl; // the line before continues into this one
  }
  llvm::StringRef line = text.substr(start).ltrim(" \t");
  if (!line.consume_front("#"))
    return false;
  return line.ltrim(" \t").starts_with("define");
}

// Whether only spaces follow `at` up to the end of a macro body (a newline
// without continuation, or the end of the text).
bool macroBodyEndsAt(llvm::StringRef text, size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r'))
    ++at;
  return at >= text.size() || text[at] == '\n';
}

bool wordAt(llvm::StringRef text, size_t i, llvm::StringRef word) {
  return text.substr(i, word.size()) == word && (i == 0 || !isIdentChar(text[i - 1])) &&
         (i + word.size() >= text.size() || !isIdentChar(text[i + word.size()]));
}

// One parameter of `(PARAMS)`: its name and its [[...]] attributes.
struct Parameter {
  std::string declaration; // without attributes: `device T *data`, `uint2`
  std::string name;        // empty when unnamed (`const device float *`)
  std::string attributes;  // "[[buffer(0)]]", or empty
};

// The parameters of `(PARAMS)` (the text between the parentheses), or
// nothing when one cannot be read.
std::optional<std::vector<Parameter>> parameterList(llvm::StringRef params) {
  std::vector<Parameter> out;
  int depth = 0;
  size_t start = 0;
  auto take = [&](size_t end) {
    llvm::StringRef p = params.substr(start, end - start);
    // Set [[...]] attributes aside, then take the last identifier.
    Parameter param;
    std::string plain;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p.substr(i, 2) == "[[") {
        size_t e = p.find("]]", i);
        if (e == llvm::StringRef::npos)
          return false;
        param.attributes += p.substr(i, e + 2 - i).str();
        i = e + 1;
        plain += ' ';
      } else {
        plain += p[i] == '\\' || p[i] == '\n' ? ' ' : p[i];
      }
    }
    llvm::StringRef t = llvm::StringRef(plain).trim();
    param.declaration = t.str();
    size_t b = t.size();
    while (b && isIdentChar(t[b - 1]))
      --b;
    llvm::StringRef name = t.substr(b);
    llvm::StringRef type = llvm::StringRef(t.substr(0, b)).trim();
    // `uint2`, `const device float *`, `constant int &`: a type without a
    // name (the last word belongs to the type).
    static const char *kTypeWords[] = {"const", "volatile", "device", "constant", "thread", "threadgroup",
                                       "unsigned", "signed", "long", "short", "struct"};
    static const char *kBuiltinTypes[] = {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long",
                                          "ulong", "half", "float", "bfloat", "size_t", "int32_t", "uint32_t",
                                          "int64_t", "uint64_t"};
    llvm::StringRef lastTypeWord = type.substr(type.find_last_of(" \t") == llvm::StringRef::npos
                                                   ? 0
                                                   : type.find_last_of(" \t") + 1);
    if (type.empty() || llvm::is_contained(kTypeWords, lastTypeWord) || llvm::is_contained(kBuiltinTypes, name) ||
        (name.size() > 1 && isdigit(static_cast<unsigned char>(name.back())) &&
         llvm::is_contained(kBuiltinTypes, name.drop_back(name.back() == '4' || name.back() == '3' || name.back() == '2' ? 1 : 0))))
      name = llvm::StringRef();
    param.name = name.str();
    out.push_back(std::move(param));
    return true;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    char c = params[i];
    depth += (c == '(' || c == '<' || c == '[' || c == '{') ? 1 : (c == ')' || c == '>' || c == ']' || c == '}') ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (!take(i))
        return std::nullopt;
      start = i + 1;
    }
  }
  if (!llvm::StringRef(params).trim().empty() && !take(params.size()))
    return std::nullopt;
  return out;
}

// Splits `list` at its top-level commas.
std::vector<llvm::StringRef> topLevelItems(llvm::StringRef list) {
  std::vector<llvm::StringRef> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    depth += (c == '(' || c == '<' || c == '[' || c == '{') ? 1 : (c == ')' || c == '>' || c == ']' || c == '}') ? -1 : 0;
    if (c == ',' && depth == 0) {
      items.push_back(list.substr(start, i - start).trim());
      start = i + 1;
    }
  }
  return items;
}

// The names in a template parameter list (`typename T, int N = 4`: T, N),
// or nothing for a form this does not read (packs, defaults).
std::optional<std::vector<std::string>> templateParameterNames(llvm::StringRef list) {
  std::vector<std::string> names;
  for (llvm::StringRef item : topLevelItems(list)) {
    if (item.contains("...") || item.contains('=') || item.empty())
      return std::nullopt;
    size_t b = item.size();
    while (b && isIdentChar(item[b - 1]))
      --b;
    if (b == item.size() || b == 0)
      return std::nullopt;
    names.push_back(item.substr(b).str());
  }
  return names;
}

// The template arguments of `f<float, 2>`: float, 2.
std::optional<std::vector<std::string>> templateArguments(llvm::StringRef instance) {
  size_t lt = instance.find('<');
  if (lt == llvm::StringRef::npos || !instance.ends_with(">"))
    return std::nullopt;
  std::vector<std::string> args;
  for (llvm::StringRef item : topLevelItems(instance.substr(lt + 1, instance.size() - lt - 2)))
    args.push_back(item.str());
  return args;
}

// `text` with each whole word in `names` replaced by its `values` entry
// (parenthesized when it is not one token, so `N * 2` keeps its meaning).
std::string substituteWords(llvm::StringRef text, const std::vector<std::string> &names,
                            const std::vector<std::string> &values) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (isIdentChar(text[i]) && (i == 0 || !isIdentChar(text[i - 1]))) {
      size_t e = i;
      while (e < text.size() && isIdentChar(text[e]))
        ++e;
      llvm::StringRef word = text.substr(i, e - i);
      auto it = std::find(names.begin(), names.end(), word);
      if (it != names.end()) {
        const std::string &v = values[it - names.begin()];
        bool simple = std::all_of(v.begin(), v.end(), [](char c) { return isIdentChar(c) || c == ':'; });
        out += simple ? v : "(" + v + ")";
      } else {
        out += word.str();
      }
      i = e;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The line breaks of `text` (with their macro continuations), so that a
// replacement keeps the lines where they were.
std::string sameLines(llvm::StringRef text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      out += i && text[i - 1] == '\\' ? " \\\n" : "\n";
  return out;
}

// "a, b, c": the names of `params`, or nothing if one has none.
std::optional<std::string> joinedNames(const std::vector<Parameter> &params) {
  std::string names;
  for (const auto &p : params) {
    if (p.name.empty())
      return std::nullopt;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  return names;
}
} // namespace

void kernelTemplateEdits(llvm::StringRef text, size_t name, std::vector<SourceEdit> &edits) {
  size_t nameEnd = name;
  while (nameEnd < text.size() && isIdentChar(text[nameEnd]))
    ++nameEnd;
  llvm::StringRef f = text.substr(name, nameEnd - name);
  size_t open = skipSpace(text, nameEnd);
  if (f.empty() || open >= text.size() || text[open] != '(')
    return; // an instantiation's error: the template's own repair covers it
  // `kernel void` before the name, after the template header.
  size_t head = text.rfind('>', name);
  size_t kernel = text.substr(0, name).rfind("kernel"), voidAt = text.substr(0, name).rfind("void");
  if (head == llvm::StringRef::npos || kernel == llvm::StringRef::npos || voidAt == llvm::StringRef::npos ||
      kernel < head || voidAt < kernel || !wordAt(text, kernel, "kernel") || !wordAt(text, voidAt, "void"))
    return;
  size_t close = closing(text, open);
  size_t body = close == llvm::StringRef::npos ? close : text.find_first_of("{;", close);
  if (body == llvm::StringRef::npos || text[body] != '{')
    return;
  auto templateParams = parameterList(text.substr(open + 1, close - open - 2));
  auto templateNames = templateParams ? joinedNames(*templateParams) : std::nullopt;
  // The template parameters' names (`template <typename T, int N>`: T, N).
  std::optional<std::vector<std::string>> templateHeadNames;
  if (size_t t0 = text.substr(0, head).rfind("template"); t0 != llvm::StringRef::npos) {
    size_t lt = skipSpace(text, t0 + 8);
    if (lt < head && text[lt] == '<')
      templateHeadNames = templateParameterNames(text.substr(lt + 1, head - lt - 1));
  }
  std::vector<SourceEdit> found = {{unsigned(kernel), 6, "      "},
                                   {unsigned(voidAt), 4, "auto"},
                                   {unsigned(body + 1), 0, "_Pragma(\"msl kernel\") "}};
  // Attributes of the template (`[[max_total_threads_per_threadgroup(n)]]`)
  // belong to each kernel made from it.
  std::string attributes;
  for (size_t a = text.find("[[", head); a != llvm::StringRef::npos && a < kernel; a = text.find("[[", a)) {
    size_t e = closing(text, a);
    if (e == llvm::StringRef::npos || e > kernel)
      break;
    attributes += text.substr(a, e - a).str() + " ";
    a = e;
  }
  if (llvm::StringRef(attributes).contains('\n'))
    attributes.clear(); // (copies must not add lines)
  // The explicit instantiations.
  for (size_t t = text.find("template"); t != llvm::StringRef::npos; t = text.find("template", t + 8)) {
    if (!wordAt(text, t, "template"))
      continue;
    size_t i = skipSpace(text, t + 8);
    size_t kernelAt = llvm::StringRef::npos; // `kernel`, or in `[[kernel]]`
    while (text.substr(i, 2) == "[[") {
      size_t e = closing(text, i);
      if (e == llvm::StringRef::npos)
        break;
      if (llvm::StringRef(text.substr(i + 2, e - i - 4)).trim() == "kernel")
        kernelAt = i;
      i = skipSpace(text, e);
    }
    if (wordAt(text, i, "kernel")) {
      kernelAt = i;
      i = skipSpace(text, i + 6);
    }
    if (kernelAt == llvm::StringRef::npos)
      continue;
    // The template's parameters with the instance's template arguments for
    // its template parameters (`device T *data [[buffer(0)]]` for
    // f<float>: `device float *data [[buffer(0)]]`).
    auto declaredFrom = [&](llvm::StringRef instance) -> std::optional<std::string> {
      auto args = templateArguments(instance);
      if (!args || !templateHeadNames || args->size() != templateHeadNames->size())
        return std::nullopt;
      std::string declared;
      for (size_t k = 0; k < templateParams->size(); ++k)
        declared += (k ? ", " : "") + substituteWords((*templateParams)[k].declaration, *templateHeadNames, *args) +
                    " " + (*templateParams)[k].attributes;
      return declared;
    };
    if (wordAt(text, i, "decltype")) {
      // `template [[host_name("x")]] [[kernel]] decltype(f<float>) f<float>;`
      size_t open2 = skipSpace(text, i + 8);
      size_t typeEnd = open2 < text.size() && text[open2] == '(' ? closing(text, open2) : llvm::StringRef::npos;
      size_t n = typeEnd == llvm::StringRef::npos ? typeEnd : skipSpace(text, typeEnd);
      if (n == llvm::StringRef::npos || !wordAt(text, n, f))
        continue;
      size_t args = skipSpace(text, n + f.size());
      size_t argsEnd = args < text.size() && text[args] == '<' ? closing(text, args) : llvm::StringRef::npos;
      if (argsEnd == llvm::StringRef::npos)
        continue;
      size_t semi = skipSpace(text, argsEnd);
      bool semiAtUse = macroBodyEndsAt(text, argsEnd) && inMacroDefinition(text, t);
      if (!semiAtUse && (semi >= text.size() || text[semi] != ';'))
        continue;
      llvm::StringRef instance = text.substr(n, argsEnd - n);
      auto declared = templateNames && !instance.contains('\n') ? declaredFrom(instance) : std::nullopt;
      if (!declared)
        return;
      found.push_back({unsigned(t), 8, "        "});
      if (!attributes.empty())
        found.push_back({unsigned(kernelAt), 0, attributes});
      found.push_back({unsigned(i), unsigned(typeEnd - i), "void" + sameLines(text.substr(i, typeEnd - i))});
      found.push_back({unsigned(n), unsigned(instance.size()),
                       "__MSL_KERNEL_NAME(" + f.str() + ")(" + *declared + ")"});
      std::string call = " { " + instance.str() + "(" + *templateNames + "); }";
      if (semiAtUse)
        found.push_back({unsigned(argsEnd), 0, call});
      else
        found.push_back({unsigned(semi), 1, call});
      continue;
    }
    if (!wordAt(text, i, "void"))
      continue;
    size_t n = skipSpace(text, i + 4);
    if (!wordAt(text, n, f))
      continue;
    size_t args = skipSpace(text, n + f.size());
    if (args >= text.size() || text[args] != '<')
      continue;
    size_t argsEnd = closing(text, args);
    size_t params = argsEnd == llvm::StringRef::npos ? argsEnd : skipSpace(text, argsEnd);
    if (params == llvm::StringRef::npos || text[params] != '(')
      continue;
    size_t paramsEnd = closing(text, params);
    size_t semi = paramsEnd == llvm::StringRef::npos ? paramsEnd : skipSpace(text, paramsEnd);
    // In a macro (`#define INSTANTIATE(T) template [[host_name(...)]] kernel
    // void f<T>(...)`), the `;` may follow each use of the macro instead:
    // the body then gets the definition and each use's `;` is an empty
    // declaration.
    bool semiAtUse = paramsEnd != llvm::StringRef::npos && macroBodyEndsAt(text, paramsEnd) &&
                     inMacroDefinition(text, t);
    if (!semiAtUse && (semi == llvm::StringRef::npos || text[semi] != ';'))
      continue;
    llvm::StringRef instance = text.substr(n, argsEnd - n);
    llvm::StringRef paramText = text.substr(params + 1, paramsEnd - params - 2);
    auto instanceParams = parameterList(paramText);
    if (!instanceParams || instance.contains('\n'))
      return; // not every instantiation can be rewritten: leave it all
    auto names = joinedNames(*instanceParams);
    if (!names) {
      // Parameters given as types only (`void f<float>(const device float *,
      // uint);`): the kernel's parameters are the instance's types with the
      // template's names and attributes.
      if (!templateNames || templateParams->size() != instanceParams->size())
        return;
      std::string declared;
      for (size_t k = 0; k < instanceParams->size(); ++k) {
        const Parameter &own = (*instanceParams)[k], &pattern = (*templateParams)[k];
        declared += (k ? ", " : "") + (own.name.empty() ? own.declaration + " " + pattern.name : own.declaration) +
                    " " + (own.attributes.empty() ? pattern.attributes : own.attributes);
      }
      found.push_back({unsigned(params + 1), unsigned(paramText.size()), declared + sameLines(paramText)});
      names = templateNames;
    }
    found.push_back({unsigned(t), 8, "        "});
    if (!attributes.empty())
      found.push_back({unsigned(kernelAt), 0, attributes});
    found.push_back({unsigned(n), unsigned(instance.size()), "__MSL_KERNEL_NAME(" + f.str() + ")"});
    if (semiAtUse)
      found.push_back({unsigned(paramsEnd), 0, " { " + instance.str() + "(" + *names + "); }"});
    else
      found.push_back({unsigned(semi), 1, " { " + instance.str() + "(" + *names + "); }"});
  }
  edits.insert(edits.end(), found.begin(), found.end());
}

// Whether `loc` (a file location) lies in one of the request's files (the
// main source, its headers, an -include prelude), not the stdlib or a
// buffer of the compiler's own.
// `fid` is set to its file.
bool inRequestFile(const SourceManager &sm, SourceLocation loc, llvm::StringRef root, FileID &fid) {
  if (loc.isInvalid() || loc.isMacroID())
    return false;
  OptionalFileEntryRef file = sm.getFileEntryRefForID(sm.getFileID(loc));
  if (!file || !file->getName().starts_with(root))
    return false;
  fid = sm.getFileID(loc);
  return true;
}

// The request path (relative to `root`, as in the CompileJob) of a request
// file.
std::string requestPath(const SourceManager &sm, FileID fid, llvm::StringRef root) {
  OptionalFileEntryRef file = sm.getFileEntryRefForID(fid);
  if (!file)
    return "";
  llvm::SmallString<128> path(file->getName());
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
  llvm::StringRef relative = path.str();
  if (!relative.consume_front(root))
    return "";
  return relative.str();
}

// Sets the file of `edits` from `from` on (those one repair just made).
void stampFile(std::vector<SourceEdit> &edits, size_t from, const SourceManager &sm, FileID fid,
               llvm::StringRef root) {
  if (from == edits.size())
    return;
  std::string path = requestPath(sm, fid, root);
  if (path.empty()) { // cannot happen for a request file; drop rather than misplace
    edits.resize(from);
    return;
  }
  for (size_t i = from; i < edits.size(); ++i)
    edits[i].file = path;
}

// The byte range of `range` in one request file: whole macro expansions in
// it (such as `float4(...)`) are fine, a range that starts or ends inside a
// macro's body, or spans two files, or lies outside the request, is not.
bool requestFileRange(const SourceManager &sm, CharSourceRange range, llvm::StringRef root, FileID &fid,
                      unsigned &begin, unsigned &end) {
  // Inside a macro's argument (`float4(a * 2.0, 1)`, the vector
  // constructors are macros) the text is spelled in the file as written.
  if (range.getBegin().isMacroID() && range.getEnd().isMacroID() &&
      sm.isMacroArgExpansion(range.getBegin()) && sm.isMacroArgExpansion(range.getEnd()))
    range = CharSourceRange(SourceRange(sm.getSpellingLoc(range.getBegin()),
                                        sm.getSpellingLoc(range.getEnd())),
                            range.isTokenRange());
  CharSourceRange file = Lexer::makeFileCharRange(range, sm, LangOptions());
  if (file.isInvalid() || !inRequestFile(sm, file.getBegin(), root, fid) ||
      sm.getFileID(file.getEnd()) != fid)
    return false;
  begin = sm.getFileOffset(file.getBegin());
  end = sm.getFileOffset(file.getEnd()); // a char range: one past the end
  return end > begin;
}

// Wraps the operand of a cast: `(T)e` -> `(T)__msl_lanewise(e)`, the
// operand's range given.
void wrapOperand(std::vector<SourceEdit> &edits, unsigned begin, unsigned end) {
  edits.push_back({begin, 0, "__msl_lanewise("});
  edits.push_back({end, 0, ")"});
}

class CastRepair : public ASTConsumer, public RecursiveASTVisitor<CastRepair> {
public:
  CastRepair(std::vector<SourceEdit> &edits, std::string root) : edits_(edits), root_(std::move(root)) {}

  // Only the declarations parsed from the source (not the precompiled
  // stdlib's), walked at the end so template instantiations exist.
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *d : group)
      parsed_.push_back(d);
    return true;
  }
  void HandleTranslationUnit(ASTContext &ctx) override {
    sm_ = &ctx.getSourceManager();
    FileID fid;
    for (Decl *d : parsed_)
      if (inRequestFile(*sm_, sm_->getExpansionLoc(d->getLocation()), root_, fid))
        TraverseDecl(d);
  }
  bool shouldVisitTemplateInstantiations() const { return true; }

  // A vector comparison converted to a number vector (`float4(a < b)`,
  // `(int4)(a < b)`, `static_cast<V>(x > y)`, `V(x > y)` in a template)
  // counts its lanes as Metal's true = 1, not OpenCL's mask -1: the
  // comparison is wrapped in __msl_b. So are the other expressions whose
  // value is a boolN in Metal but a -1/0 mask in OpenCL: `!`, `&&` and `||`
  // on vectors (`int4(!(a < b))`, `float4(isnan(x) || x > y)`). Template
  // instantiations are visited, so a dependent operand is judged by the
  // types it has in each instantiation (the edit goes to the template's
  // text, once; __msl_b leaves a scalar as it is). (Masks used as
  // conditions keep the mask, which select and ?: expect.)
  bool VisitCallExpr(CallExpr *call) {
    const FunctionDecl *callee = call->getDirectCallee();
    if (!callee || !callee->getIdentifier())
      return true;
    llvm::StringRef name = callee->getName();
    // The constructors (the prelude's macros and make), and the casts that
    // source repair writes for vectors (__msl_scast, and __msl_lanewise,
    // the operand of a C-style or functional cast).
    if (!name.starts_with("__msl_make_") && name != "make" && name != "__msl_scast" &&
        name != "__msl_lanewise")
      return true;
    for (Expr *arg : call->arguments())
      wrapComparison(arg);
    return true;
  }

  // `auto m = a < b;` declares a boolN in Metal, a -1/0 integer vector in
  // OpenCL (so `int4(m)` or `m.x` would give -1): the initializer becomes
  // __msl_b(a < b), a boolN. Likewise a boolN variable initialized from a
  // vector `!`, `&&` or `||` (whose OpenCL value is a -1/0 char mask).
  bool VisitVarDecl(VarDecl *var) {
    if (isa<ParmVarDecl>(var) || isa<DecompositionDecl>(var) || var->isInvalidDecl() || !var->hasInit() ||
        !var->getType()->getAs<ExtVectorType>())
      return true;
    if (var->getType()->getContainedAutoType() || isBoolVector(var->getType()))
      wrapComparison(var->getInit());
    return true;
  }

  // Whether `e`'s value is a vector mask (-1/0 lanes) that Metal has as a
  // boolN: a comparison, `!`, `&&` or `||` of vectors.
  static bool isVectorMask(const Expr *e) {
    e = e->IgnoreParenImpCasts();
    if (!e->getType()->getAs<ExtVectorType>())
      return false;
    if (const auto *op = dyn_cast<BinaryOperator>(e))
      return op->isComparisonOp() || op->isLogicalOp();
    if (const auto *op = dyn_cast<UnaryOperator>(e))
      return op->getOpcode() == UO_LNot;
    return false;
  }

  void wrapComparison(Expr *e) {
    if (!e || !isVectorMask(e))
      return;
    const Expr *op = e->IgnoreParenImpCasts();
    unsigned begin, end;
    FileID fid;
    if (requestFileRange(*sm_, CharSourceRange::getTokenRange(op->getSourceRange()), root_, fid, begin, end) &&
        done_.insert({fid, begin}).second) {
      size_t before = edits_.size();
      edits_.push_back({begin, 0, "__msl_b("});
      edits_.push_back({end, 0, ")"});
      stampFile(edits_, before, *sm_, fid, root_);
    }
  }

  // static_cast<int4>(a < b): the same as int4(a < b). (Between vectors of
  // different element types, source repair makes it __msl_scast, whose
  // argument VisitCallExpr sees.)
  bool VisitCXXStaticCastExpr(CXXStaticCastExpr *cast) {
    if (cast->getType()->getAs<ExtVectorType>())
      wrapComparison(cast->getSubExprAsWritten());
    return true;
  }

  bool VisitCStyleCastExpr(CStyleCastExpr *cast) { return visitExplicitCast(cast); }
  // `H(value)` with H a vector type (a template parameter or typedef the
  // prelude's constructor macros do not cover) is a cast too.
  bool VisitCXXFunctionalCastExpr(CXXFunctionalCastExpr *cast) { return visitExplicitCast(cast); }

  bool visitExplicitCast(ExplicitCastExpr *cast) {
    if (cast->getType()->getAs<ExtVectorType>())
      wrapComparison(cast->getSubExprAsWritten());
    const auto *to = cast->getType()->getAs<ExtVectorType>();
    const auto *from = cast->getSubExprAsWritten()->getType()->getAs<ExtVectorType>();
    if (!to || !from || cast->getCastKind() != CK_BitCast ||
        to->getElementType().getCanonicalType() == from->getElementType().getCanonicalType())
      return true;
    unsigned begin, end;
    FileID fid;
    SourceRange operand = cast->getSubExprAsWritten()->getSourceRange();
    if (requestFileRange(*sm_, CharSourceRange::getTokenRange(operand), root_, fid, begin, end) &&
        done_.insert({fid, begin}).second) {
      size_t before = edits_.size();
      wrapOperand(edits_, begin, end);
      stampFile(edits_, before, *sm_, fid, root_);
    }
    return true;
  }

private:
  std::vector<SourceEdit> &edits_;
  std::string root_;
  std::vector<Decl *> parsed_;
  const SourceManager *sm_ = nullptr;
  std::set<std::pair<FileID, unsigned>> done_; // template instantiations share the pattern's text
};

} // namespace

std::unique_ptr<ASTConsumer> createCastRepairConsumer(std::vector<SourceEdit> &edits,
                                                      const std::string &sourceRoot) {
  return std::make_unique<CastRepair>(edits, sourceRoot);
}

void RepairCollector::note(const Diagnostic &info) {
  size_t before = edits_.size();
  FileID fid;
  noteEdits(info, fid);
  if (info.hasSourceManager())
    stampFile(edits_, before, info.getSourceManager(), fid, root_);
}

void RepairCollector::error(const Diagnostic &info) {
  size_t before = edits_.size();
  FileID fid;
  errorEdits(info, fid);
  if (info.hasSourceManager())
    stampFile(edits_, before, info.getSourceManager(), fid, root_);
}

// `template <class T> void f(T out[4], T t)` called with a thread array and a
// T: C++ for OpenCL deduces T = `__private float` from the generic pointer
// parameter and float from the value, and gives up; in Metal an unqualified
// pointer parameter is a thread pointer, which `thread T out[4]` says. The
// note names the template parameter and points at the function: each of
// its parameters that is an unqualified pointer or array of that template
// parameter gets `thread `.
void threadPointerParameterEdits(llvm::StringRef text, size_t name, llvm::StringRef templateParam,
                                 std::vector<SourceEdit> &edits) {
  size_t open = skipSpace(text, name + [&] {
    size_t e = name;
    while (e < text.size() && isIdentChar(text[e]))
      ++e;
    return e - name;
  }());
  if (open >= text.size() || text[open] != '(')
    return;
  size_t close = closing(text, open);
  if (close == llvm::StringRef::npos)
    return;
  size_t start = open + 1;
  for (llvm::StringRef item : topLevelItems(text.substr(open + 1, close - open - 2))) {
    size_t at = text.find(item, start);
    if (at == llvm::StringRef::npos)
      return;
    start = at + item.size();
    llvm::StringRef rest = item;
    bool isConst = rest.consume_front("const ");
    (void)isConst;
    rest = rest.ltrim();
    if (!rest.consume_front(templateParam) || rest.empty() || isIdentChar(rest[0]))
      continue;
    rest = rest.ltrim();
    bool pointer = rest.starts_with("*");
    size_t bracket = rest.find('[');
    bool array = bracket != llvm::StringRef::npos && !rest.contains('*') && !rest.contains('&');
    if (pointer || array)
      edits.push_back({unsigned(at), 0, "thread "});
  }
}

void RepairCollector::noteEdits(const Diagnostic &info, FileID &fid) {
  if (info.getID() == diag::note_ovl_candidate_inconsistent_deduction && info.hasSourceManager() &&
      info.getNumArgs() >= 4 && info.getArgKind(0) == DiagnosticsEngine::ak_sint && info.getRawArg(0) == 0) {
    QualType a = typeArg(info, 2), b = typeArg(info, 3);
    const SourceManager &sm = info.getSourceManager();
    SourceLocation loc = info.getLocation();
    bool privateVsPlain = !a.isNull() && !b.isNull() &&
                          ((a.getAddressSpace() == LangAS::opencl_private && b.getAddressSpace() == LangAS::Default) ||
                           (b.getAddressSpace() == LangAS::opencl_private && a.getAddressSpace() == LangAS::Default)) &&
                          a.getUnqualifiedType().getCanonicalType().getTypePtr() ==
                              b.getUnqualifiedType().getCanonicalType().getTypePtr();
    std::string param;
    if (info.getArgKind(1) == DiagnosticsEngine::ak_declarationname)
      param = DeclarationName::getFromOpaqueInteger(info.getRawArg(1)).getAsString();
    else if (info.getArgKind(1) == DiagnosticsEngine::ak_nameddecl)
      param = reinterpret_cast<const NamedDecl *>(info.getRawArg(1))->getName().str();
    else if (info.getArgKind(1) == DiagnosticsEngine::ak_identifierinfo && info.getArgIdentifier(1))
      param = info.getArgIdentifier(1)->getName().str();
    if (privateVsPlain && !param.empty() && inRequestFile(sm, loc, root_, fid))
      threadPointerParameterEdits(sm.getBufferData(fid), sm.getFileOffset(loc), param, edits_);
    return;
  }
  // "invalid vector element type 'bool'" is reported in the stdlib's `vec`
  // alias; the note "in instantiation of template type alias 'vec'
  // requested here" points at the source's `vec<bool, N>`.
  if (!lastErrorIsBoolVector_ || !info.hasSourceManager())
    return;
  const SourceManager &sm = info.getSourceManager();
  SourceLocation loc = info.getLocation();
  if (loc.isMacroID() || !inRequestFile(sm, loc, root_, fid))
    return;
  llvm::StringRef text = sm.getBufferData(fid);
  size_t at = sm.getFileOffset(loc);
  llvm::StringRef here = text.substr(at, 16);
  size_t angle = here.find('<');
  if (!here.starts_with("vec") || angle == llvm::StringRef::npos)
    return;
  size_t b = here.find("bool", angle);
  if (b != llvm::StringRef::npos && here.substr(angle + 1, b - angle - 1).trim().empty())
    edits_.push_back({unsigned(at + b), 4, "char"});
}

void RepairCollector::errorEdits(const Diagnostic &info, FileID &fid) {
  FileID fid2;
  lastErrorIsBoolVector_ = info.getID() == diag::err_attribute_invalid_vector_type &&
                           !typeArg(info, 0).isNull() && typeArg(info, 0)->isBooleanType();
  if (!info.hasSourceManager())
    return;
  const SourceManager &sm = info.getSourceManager();
  unsigned begin, end;
  switch (info.getID()) {
  case diag::err_init_conversion_failed:
    // boolN initialized from a comparison mask: __msl_b(mask) is the boolN.
    if (info.getNumRanges() >= 1 && isBoolVector(typeArg(info, 1)) && isVector(typeArg(info, 3)) &&
        requestFileRange(sm, info.getRange(0), root_, fid, begin, end)) {
      edits_.push_back({begin, 0, "__msl_b("});
      edits_.push_back({end, 0, ")"});
    }
    break;
  case diag::err_typecheck_convert_incompatible:
    // `m = a < b;` with m a boolN (assigning, select 0): as for the
    // initialization above. The destination type is argument 0, the source
    // argument 1, the source's range range 0.
    if (info.getNumArgs() >= 3 &&
        (info.getArgKind(2) == DiagnosticsEngine::ak_sint || info.getArgKind(2) == DiagnosticsEngine::ak_uint) &&
        info.getRawArg(2) == 0 && info.getNumRanges() >= 1 && isBoolVector(typeArg(info, 0)) &&
        isVector(typeArg(info, 1)) && !isBoolVector(typeArg(info, 1)) &&
        requestFileRange(sm, info.getRange(0), root_, fid, begin, end)) {
      edits_.push_back({begin, 0, "__msl_b("});
      edits_.push_back({end, 0, ")"});
    }
    break;
  case diag::err_reference_bind_drops_quals: {
    // `thread T&` bound to a generic lvalue (`return v[i];` in an unqualified
    // method, whose `this` is generic in C++ for OpenCL): in Metal both are
    // thread memory; __msl_thread_ref says so.
    QualType to = typeArg(info, 0), from = typeArg(info, 1);
    if (to.isNull() || from.isNull() || info.getNumArgs() < 3 ||
        info.getArgKind(2) != DiagnosticsEngine::ak_sint || info.getRawArg(2) != 1 ||
        to.getAddressSpace() != LangAS::opencl_private || from.getAddressSpace() != LangAS::opencl_generic ||
        info.getNumRanges() < 1 || !requestFileRange(sm, info.getRange(0), root_, fid, begin, end))
      break;
    edits_.push_back({begin, 0, "__msl_thread_ref("});
    edits_.push_back({end, 0, ")"});
    break;
  }
  case diag::err_local_cant_init: {
    // `threadgroup int flag = 0;`, which Apple's compiler accepts: the
    // initializer becomes an assignment right after the declaration, made by
    // every thread of the threadgroup (the same value; code that relies on
    // it follows it with a barrier). The error points at the name.
    SourceLocation loc = info.getLocation();
    if (loc.isMacroID() || !inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t at = sm.getFileOffset(loc), e = at;
    while (e < text.size() && isIdentChar(text[e]))
      ++e;
    size_t eq = e;
    while (eq < text.size() && (text[eq] == ' ' || text[eq] == '\t'))
      ++eq;
    if (e == at || eq >= text.size() || text[eq] != '=' || text.substr(eq, 2) == "==")
      break;
    edits_.push_back({unsigned(eq), 0, "; " + text.substr(at, e - at).str() + " "});
    break;
  }
  case diag::err_return_value_with_address_space: {
    // `inline thread ushort f(...)`: Apple's compiler ignores an address
    // space on a returned value; the qualifier before the name is blanked.
    SourceLocation loc = info.getLocation();
    if (loc.isMacroID() || !inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t name = sm.getFileOffset(loc);
    size_t lineStart = text.substr(0, name).rfind('\n');
    lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
    for (const char *space : {"thread", "device", "constant", "threadgroup"}) {
      llvm::StringRef word(space);
      for (size_t w = text.substr(lineStart, name - lineStart).find(word); w != llvm::StringRef::npos;
           w = text.substr(lineStart, name - lineStart).find(word, w + 1))
        if (wordAt(text, lineStart + w, word)) {
          edits_.push_back({unsigned(lineStart + w), unsigned(word.size()), std::string(word.size(), ' ')});
          return;
        }
    }
    break;
  }
  case diag::err_template_kernel: {
    // A kernel template (PyTorch, MLX): the template and each explicit
    // instantiation are rewritten as kernelTemplateEdits describes.
    SourceLocation loc = sm.getSpellingLoc(info.getLocation());
    if (inRequestFile(sm, loc, root_, fid))
      kernelTemplateEdits(sm.getBufferData(fid), sm.getFileOffset(loc), edits_);
    break;
  }
  case diag::err_unknown_typename: {
    // `float4 (&out)[2]`: a declarator that looks like a call, so the
    // prelude's constructor macro expanded the type name. As the argument
    // of the prelude's __msl_type<...> the name is not followed by `(` and
    // stays a type.
    if (info.getNumArgs() < 1 || info.getArgKind(0) != DiagnosticsEngine::ak_identifierinfo)
      break;
    const IdentifierInfo *name = info.getArgIdentifier(0);
    SourceLocation loc = info.getLocation();
    // `coherent device T *p`: Metal 3.2's coherent without its scope (the
    // stage header defines `coherent(...)`); the word is dropped. Only from
    // 3.2 on, where the function-like macro exists.
    if (name && name->getName() == "coherent" && !loc.isMacroID() && inRequestFile(sm, loc, root_, fid)) {
      edits_.push_back({unsigned(sm.getFileOffset(loc)), 8, "        "});
      break;
    }
    if (!name || !name->getName().starts_with("__msl_make_") || !loc.isMacroID())
      break;
    loc = sm.getExpansionLoc(loc);
    llvm::StringRef type = name->getName().drop_front(strlen("__msl_make_"));
    if (!inRequestFile(sm, loc, root_, fid))
      break;
    size_t at = sm.getFileOffset(loc);
    if (sm.getBufferData(fid).substr(at, type.size()) == type)
      edits_.push_back({unsigned(at), unsigned(type.size()), "__msl_type<" + type.str() + ">"});
    break;
  }
  case diag::err_opencl_implicit_vector_conversion: {
    // `isunordered(a, b) || a == b` on vectors: a boolN beside a comparison,
    // which is a boolN in Metal too; the comparison becomes one (__msl_b).
    // Clang gives no operand ranges, only the operator's place: the operand
    // is the text up to the enclosing bracket or the next lower-precedence
    // logical operator.
    QualType a = typeArg(info, 0), b = typeArg(info, 1);
    SourceLocation loc = info.getLocation();
    // In a macro's argument (`int4(isnan(x) || x > y)`: the vector
    // constructors are macros) the operator is spelled in the file.
    if (loc.isMacroID() && sm.isMacroArgExpansion(loc))
      loc = sm.getSpellingLoc(loc);
    if (isBoolVector(a) == isBoolVector(b) || !isVector(a) || !isVector(b) || loc.isMacroID() ||
        !inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t op = sm.getFileOffset(loc);
    size_t opLength = text.substr(op, 2) == "||" || text.substr(op, 2) == "&&" ? 2 : 1;
    auto [ob, oe] = isBoolVector(a) ? operandAfter(text, op + opLength) : operandBefore(text, op);
    if (oe > ob && isComparison(text.substr(ob, oe - ob))) {
      edits_.push_back({unsigned(ob), 0, "__msl_b("});
      edits_.push_back({unsigned(oe), 0, ")"});
    }
    break;
  }
  case diag::err_opencl_scalar_type_rank_greater_than_vector_type: {
    // The scalar converted to the vector's element type first (Metal's
    // implicit conversion); the vector's text only names its type.
    if (info.getNumRanges() < 2)
      break;
    unsigned vector = isVector(typeArg(info, 0)) ? 0 : 1;
    unsigned vb, ve;
    if (requestFileRange(sm, info.getRange(1 - vector), root_, fid, begin, end) &&
        requestFileRange(sm, info.getRange(vector), root_, fid2, vb, ve) && fid == fid2) {
      llvm::StringRef text = sm.getBufferData(fid).substr(vb, ve - vb);
      edits_.push_back({begin, 0, "__msl_sc<decltype(+(" + text.str() + "))>("});
      edits_.push_back({end, 0, ")"});
    }
    break;
  }
  case diag::err_expected: {
    // `[[color(0) index(1)]]`: attributes separated by a space, which
    // Apple's compiler accepts; a comma is inserted.
    if (info.getNumArgs() < 1 || info.getArgKind(0) != DiagnosticsEngine::ak_tokenkind ||
        tok::TokenKind(info.getRawArg(0)) != tok::comma)
      break;
    SourceLocation loc = info.getLocation();
    if (loc.isMacroID() || !inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t at = sm.getFileOffset(loc);
    llvm::StringRef before = text.substr(0, at).rtrim(" \t");
    llvm::StringRef after = text.substr(at).ltrim(" \t");
    size_t open = before.rfind("[[");
    if (before.ends_with(")") && open != llvm::StringRef::npos &&
        before.substr(open).find("]]") == llvm::StringRef::npos &&
        before.substr(open).find('\n') == llvm::StringRef::npos && !after.empty() &&
        (isalpha(static_cast<unsigned char>(after[0])) || after[0] == '_'))
      edits_.push_back({unsigned(at), 0, ","});
    break;
  }
  case diag::err_typecheck_cond_incompatible_operands: {
    // `c ? struct_temporary : local_struct`: the same class, once without and
    // once with an address space. Both become values (__msl_value copies).
    QualType a = typeArg(info, 0), b = typeArg(info, 1);
    if (a.isNull() || b.isNull() || !a->isRecordType() ||
        a.getUnqualifiedType().getCanonicalType().getTypePtr() !=
            b.getUnqualifiedType().getCanonicalType().getTypePtr() ||
        info.getNumRanges() < 2)
      break;
    unsigned lb, le, rb, re;
    if (requestFileRange(sm, info.getRange(0), root_, fid, lb, le) &&
        requestFileRange(sm, info.getRange(1), root_, fid2, rb, re) && fid == fid2) {
      edits_.push_back({lb, 0, "__msl_value("});
      edits_.push_back({le, 0, ")"});
      edits_.push_back({rb, 0, "__msl_value("});
      edits_.push_back({re, 0, ")"});
    }
    break;
  }
  case diag::err_excess_initializers: {
    // `vec<T, 4>(a, b, c, d)`: a vector constructor call through a name the
    // prelude's macros cannot see (an alias template). The error points at
    // the type; it is rewritten to metal::detail::make<TYPE>(...). If TYPE
    // was not a vector the repaired compile fails and the error stands.
    // In a macro (argument or body) the text to edit is where it is spelled
    // (mfa declares vectors so inside macros); a macro body's edit applies
    // to every expansion alike.
    SourceLocation loc = sm.getSpellingLoc(info.getLocation());
    if (!inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t start = sm.getFileOffset(loc), i = start;
    auto isIdent = [&](size_t k) {
      return k < text.size() && (isalnum(static_cast<unsigned char>(text[k])) || text[k] == '_' ||
                                 text[k] == ':');
    };
    while (isIdent(i))
      ++i;
    if (i == start)
      break;
    if (i < text.size() && text[i] == '<') // one balanced template argument list
      i = closing(text, i);
    if (i == llvm::StringRef::npos)
      break;
    while (i < text.size() && text[i] == ' ')
      ++i;
    if (i >= text.size() || text[i] != '(')
      break;
    // `uint2 dimens(w, h);`: the error points at a variable declared with
    // direct initialization; it becomes `uint2 dimens = make<uint2>(w, h)`.
    if (auto type = declaredTypeBefore(text, start)) {
      edits_.push_back({unsigned(i), 1, " = ::metal::detail::make<" + type->str() + ">("});
      break;
    }
    edits_.push_back({unsigned(start), 0, "::metal::detail::make<"});
    edits_.push_back({unsigned(i), 1, ">("});
    break;
  }
  case diag::err_bad_cxx_cast_vector_to_vector_different_size: {
    // `(half2)float2_value`: the range is the whole cast; the operand
    // follows the parenthesized type.
    if (info.getNumRanges() < 1 || !requestFileRange(sm, info.getRange(0), root_, fid, begin, end))
      break;
    llvm::StringRef text = sm.getBufferData(fid).substr(begin, end - begin);
    if (!text.starts_with("(")) {
      // A functional cast, `H(value)`: the operand is inside the parentheses.
      size_t open = text.find('(');
      if (open != llvm::StringRef::npos && text.ends_with(")") && open + 2 < text.size())
        wrapOperand(edits_, begin + unsigned(open) + 1, end - 1);
      break;
    }
    int depth = 0;
    for (unsigned i = 0; i < text.size(); ++i) {
      depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
      if (depth == 0) {
        if (begin + i + 1 < end)
          wrapOperand(edits_, begin + i + 1, end);
        break;
      }
    }
    break;
  }
  case diag::err_bad_cxx_cast_qualifiers_away: {
    // `reinterpret_cast<constant B* constant (&)[8]>(set.b20)` over an
    // array of `const device B*` (spirv-cross's argument buffers): Metal
    // reinterprets the pointers; C++ forbids dropping the pointees' const.
    // As a C-style cast, ((T)(e)), it is the reinterpretation Metal means.
    // Only that form (a reference to a pointer, or to an array of them,
    // held in memory): elsewhere casting away const stays an error, as it
    // is in Metal.
    QualType to = typeArg(info, 2);
    if (to.isNull() || !to->isReferenceType())
      break;
    QualType held = to->getPointeeType();
    if (const ArrayType *array = held->getAsArrayTypeUnsafe())
      held = array->getElementType();
    if (!held->isPointerType())
      break;
    SourceLocation loc = sm.getSpellingLoc(info.getLocation());
    if (!inRequestFile(sm, loc, root_, fid))
      break;
    llvm::StringRef text = sm.getBufferData(fid);
    size_t at = sm.getFileOffset(loc);
    const llvm::StringRef kCast = "reinterpret_cast<";
    if (text.substr(at, kCast.size()) != kCast)
      break;
    size_t i = closing(text, at + kCast.size() - 1); // just past the '>'
    if (i == llvm::StringRef::npos || i >= text.size() || text[i] != '(')
      break;
    size_t end = closing(text, i);
    if (end == llvm::StringRef::npos)
      break;
    // ((T)(e)): parenthesized whole, so a following [i] or -> still applies
    // to the cast's result.
    edits_.push_back({unsigned(at), unsigned(kCast.size()), "(("});
    edits_.push_back({unsigned(i - 1), 1, ")"});
    edits_.push_back({unsigned(end), 0, ")"});
    break;
  }
  case diag::err_bad_cxx_cast_generic: {
    SourceLocation loc = info.getLocation();
    if (loc.isMacroID() && sm.isMacroArgExpansion(loc))
      loc = sm.getSpellingLoc(loc);
    // static_cast (select 1) from a vector to a vector.
    if (loc.isMacroID() || !inRequestFile(sm, loc, root_, fid) || !isVector(typeArg(info, 1)) ||
        !isVector(typeArg(info, 2)))
      break;
    unsigned offset = sm.getFileOffset(loc);
    // Same length: columns do not move.
    if (sm.getBufferData(fid).substr(offset, 11) == "static_cast")
      edits_.push_back({offset, 11, "__msl_scast"});
    break;
  }
  default:
    break;
  }
}

unsigned ColumnMap::original(unsigned line, unsigned column) const {
  auto it = shifts_.find(line);
  if (it == shifts_.end())
    return column;
  // Edits in source order; each one after the column's original position
  // moved it. Columns inside inserted text map to the edit's position.
  unsigned result = column;
  for (auto [at, growth] : it->second)
    if (at < result)
      result = std::max<int>(int(at), int(result) - growth);
  return result;
}

std::string applyEdits(const std::string &source, std::vector<SourceEdit> edits, ColumnMap &map) {
  std::stable_sort(edits.begin(), edits.end(),
                   [](const SourceEdit &a, const SourceEdit &b) { return a.offset < b.offset; });
  std::string out;
  unsigned copied = 0;
  // Each instantiation of a template reports the same error at the same
  // place: its repair is made once.
  std::set<std::tuple<unsigned, unsigned, std::string>> made;
  // Line and line start of `counted`, advanced with the edits (in offset
  // order), so a file with many edits is read once.
  unsigned line = 1, counted = 0, lineStart = 0;
  for (const auto &e : edits) {
    if (e.offset < copied || e.offset + e.length > source.size())
      continue; // overlaps an earlier edit
    if (!made.emplace(e.offset, e.length, e.text).second)
      continue;
    out.append(source, copied, e.offset - copied);
    // Position of the edit in the original text.
    for (; counted < e.offset; ++counted)
      if (source[counted] == '\n') {
        ++line;
        lineStart = counted + 1;
      }
    unsigned column = e.offset - lineStart + 1;
    if (int growth = int(e.text.size()) - int(e.length))
      map.add(line, column, growth);
    out += e.text;
    copied = e.offset + e.length;
  }
  out.append(source, copied, std::string::npos);
  return out;
}

} // namespace msl::compiler
