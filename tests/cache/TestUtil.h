//===- TestUtil.h - Helpers for msl_cache tests ------------------*- C++ -*-===//
#ifndef MSL_CACHE_TESTS_TESTUTIL_H
#define MSL_CACHE_TESTS_TESTUTIL_H

#include "msl/cache/ContentStore.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace msl::cache::test {

/// Fixture giving every test a fresh, self-cleaning store directory.
class StoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Tmpl =
        (std::filesystem::temp_directory_path() / "msl-cache-test-XXXXXX")
            .string();
    ASSERT_NE(mkdtemp(Tmpl.data()), nullptr);
    Dir = Tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(Dir); }

  StoreOptions options() {
    StoreOptions O;
    O.path = (std::filesystem::path(Dir) / "db").string();
    // Collect warnings instead of spamming the test log.
    O.warning_handler = [this](std::string_view M) {
      Warnings.emplace_back(M);
    };
    return O;
  }

  std::unique_ptr<ContentStore> open() { return open(options()); }
  std::unique_ptr<ContentStore> open(const StoreOptions &O) {
    auto R = ContentStore::open(O);
    EXPECT_TRUE(R.isOk()) << R.status().toString();
    return R ? R.take() : nullptr;
  }

  /// Every column family of the store (RocksDB opens all or none).
  std::vector<rocksdb::ColumnFamilyDescriptor> families() {
    std::vector<std::string> Names;
    auto S = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(),
                                             options().path, &Names);
    EXPECT_TRUE(S.ok()) << S.ToString();
    std::vector<rocksdb::ColumnFamilyDescriptor> Cfs;
    for (auto &N : Names)
      Cfs.emplace_back(N, rocksdb::ColumnFamilyOptions());
    return Cfs;
  }
  static size_t familyIndex(const std::vector<rocksdb::ColumnFamilyDescriptor> &Cfs,
                            const std::string &Cf) {
    for (size_t I = 0; I < Cfs.size(); ++I)
      if (Cfs[I].name == (Cf.empty() || Cf == "meta" ? "default" : Cf))
        return I;
    return 0;
  }

  /// Deletes \p Key of column family \p Cf through a raw RocksDB handle.
  void rawDelete(const std::string &Cf, const std::string &Key) {
    std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = families();
    std::vector<rocksdb::ColumnFamilyHandle *> H;
    rocksdb::DB *Db = nullptr;
    auto S = rocksdb::DB::Open(rocksdb::DBOptions(), options().path, Cfs, &H, &Db);
    ASSERT_TRUE(S.ok()) << S.ToString();
    S = Db->Delete(rocksdb::WriteOptions(), H[familyIndex(Cfs, Cf)], Key);
    EXPECT_TRUE(S.ok()) << S.ToString();
    for (auto *X : H)
      Db->DestroyColumnFamilyHandle(X);
    Db->Close();
    delete Db;
  }

  /// Overwrites \p Key in column family \p Cf with \p Value through a raw
  /// RocksDB handle, bypassing the library: simulates on-disk damage. The
  /// store must be closed.
  void rawPut(const std::string &Cf, const std::string &Key,
              const std::string &Value) {
    rocksdb::DBOptions DbOpts;
    std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = families();
    std::vector<rocksdb::ColumnFamilyHandle *> H;
    rocksdb::DB *Db = nullptr;
    auto S = rocksdb::DB::Open(DbOpts, options().path, Cfs, &H, &Db);
    ASSERT_TRUE(S.ok()) << S.ToString();
    auto *Target = H[familyIndex(Cfs, Cf)];
    S = Db->Put(rocksdb::WriteOptions(), Target, Key, Value);
    EXPECT_TRUE(S.ok()) << S.ToString();
    for (auto *X : H)
      Db->DestroyColumnFamilyHandle(X);
    Db->Close();
    delete Db;
  }

  /// Reads a raw value (empty optional if absent).
  std::optional<std::string> rawGet(const std::string &Cf,
                                    const std::string &Key) {
    rocksdb::DBOptions DbOpts;
    std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = families();
    std::vector<rocksdb::ColumnFamilyHandle *> H;
    rocksdb::DB *Db = nullptr;
    auto S = rocksdb::DB::OpenForReadOnly(DbOpts, options().path, Cfs, &H, &Db);
    EXPECT_TRUE(S.ok()) << S.ToString();
    if (!S.ok())
      return std::nullopt;
    std::string V;
    auto *Target = H[familyIndex(Cfs, Cf)];
    S = Db->Get(rocksdb::ReadOptions(), Target, Key, &V);
    for (auto *X : H)
      Db->DestroyColumnFamilyHandle(X);
    delete Db;
    if (S.ok())
      return V;
    return std::nullopt;
  }

  std::string Dir;
  std::vector<std::string> Warnings;
};

} // namespace msl::cache::test

#endif
