// The SQLite layer's kept statements on a real file: a text prepared again
// gets the statement kept from before, reset and with its binds cleared; two
// uses of one text at once each get a statement; a statement left mid-rows
// holds no read on the connection.
#include "service/sqlite.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "helpers/temp_dir.hpp"

namespace tula::service::sql {
namespace {

using testing::TempDir;

constexpr const char* kSelectAbove = "SELECT n FROM numbers WHERE n > ?1 ORDER BY n";

std::vector<int64_t> rows_above(Database& db, int64_t floor) {
  auto st = db.prepare(kSelectAbove);
  st.bind(1, floor);
  std::vector<int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  return out;
}

class KeptStatements : public ::testing::Test {
 protected:
  KeptStatements() : db((dir.path() / "t.db").string()) {
    db.exec("CREATE TABLE numbers(n INTEGER); INSERT INTO numbers VALUES (1), (2), (3), (4);");
  }
  TempDir dir;
  Database db;
};

TEST_F(KeptStatements, TheSameTextAgainRunsWithItsOwnBinds) {
  EXPECT_EQ(rows_above(db, 2), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(rows_above(db, 0), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(rows_above(db, 3), (std::vector<int64_t>{4}));
}

TEST_F(KeptStatements, BindsDoNotCarryOverToTheNextUse) {
  { db.prepare("SELECT ?1").bind(1, int64_t{7}).run(); }
  auto st = db.prepare("SELECT ?1");
  ASSERT_TRUE(st.step());
  EXPECT_TRUE(st.is_null(0)) << "the kept statement still had the last use's bind";
}

TEST_F(KeptStatements, TwoUsesOfOneTextAtOnceEachGetAStatement) {
  auto outer = db.prepare(kSelectAbove);
  outer.bind(1, int64_t{0});
  std::vector<std::vector<int64_t>> inner;
  while (outer.step()) inner.push_back(rows_above(db, outer.integer(0)));
  EXPECT_EQ(inner, (std::vector<std::vector<int64_t>>{{2, 3, 4}, {3, 4}, {4}, {}}));
}

TEST_F(KeptStatements, AStatementLeftMidRowsHoldsNoRead) {
  {
    auto st = db.prepare(kSelectAbove);
    st.bind(1, int64_t{0});
    ASSERT_TRUE(st.step());
  }
  // A read still open on this connection locks the table against its drop.
  EXPECT_NO_THROW(db.exec("DROP TABLE numbers"));
}

TEST_F(KeptStatements, ABadTextIsRefusedEachTimeItIsAsked) {
  for (int i = 0; i < 2; ++i) EXPECT_THROW(db.prepare("SELEC n FROM numbers"), Error);
  EXPECT_EQ(rows_above(db, 3), (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace tula::service::sql
