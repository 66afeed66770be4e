#include "CompileRecording.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace msl::service {

std::string recordingKey(const msl::internal::WorkerRequest &request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    request.SerializeToCodedStream(&coded);
  }
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_Digest(bytes.data(), bytes.size(), hash, &length, EVP_sha256(), nullptr);
  static const char *kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < length; ++i) {
    hex += kHex[hash[i] >> 4];
    hex += kHex[hash[i] & 15];
  }
  return hex;
}

void recordCompile(const std::string &dir, const msl::internal::WorkerRequest &request,
                   const msl::internal::WorkerResponse &response) {
  const std::string path = dir + "/" + recordingKey(request);
  {
    std::ofstream out(path + ".tmp", std::ios::binary);
    if (!out || !response.SerializeToOstream(&out))
      return;
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

bool replayCompile(const std::string &dir, const msl::internal::WorkerRequest &request,
                   msl::internal::WorkerResponse &response) {
  std::ifstream in(dir + "/" + recordingKey(request), std::ios::binary);
  if (!in)
    return false;
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  return response.ParseFromString(bytes);
}

} // namespace msl::service
