#include "BinaryIdentity.h"

#include <elf.h>
#include <link.h>
#include <openssl/evp.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace msl::service {
namespace {

class Sha256 {
public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void update(const void *data, size_t size) { EVP_DigestUpdate(ctx_.get(), data, size); }
  // Length-prefixed, so that no two sequences of fields hash alike.
  void field(const std::string &s) {
    uint64_t n = s.size();
    update(&n, sizeof n);
    update(s.data(), s.size());
  }
  bool file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return false;
    std::vector<char> buffer(1 << 20);
    while (in) {
      in.read(buffer.data(), std::streamsize(buffer.size()));
      update(buffer.data(), size_t(in.gcount()));
    }
    return true;
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest, &length);
    static const char *digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < length; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 15];
    }
    return out;
  }

private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx_;
};

// The GNU build ID of a loaded object, from its PT_NOTE segments in memory.
std::string buildId(const dl_phdr_info &info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const char *p = reinterpret_cast<const char *>(info.dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const char *name = p + sizeof(ElfW(Nhdr));
      const char *desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + note->n_descsz <= end)
        return std::string(desc, note->n_descsz);
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

} // namespace

const std::string &binaryIdentity() {
  static const std::string identity = [] {
    Sha256 hash;
    hash.field("exe");
    if (!hash.file("/proc/self/exe"))
      hash.field("unreadable");
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
          auto &h = *static_cast<Sha256 *>(data);
          std::string name = info->dlpi_name ? info->dlpi_name : "";
          if (name.empty())
            return 0; // the executable (hashed above) or the vDSO
          h.field(name);
          std::string id = buildId(*info);
          if (!id.empty())
            h.field("build-id:" + id);
          else if (!h.file(name))
            h.field("unreadable");
          return 0;
        },
        &hash);
    return "sha256:" + hash.hex();
  }();
  return identity;
}

} // namespace msl::service
