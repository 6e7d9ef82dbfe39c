// Environment and shared-file providers, the INI parser and region resolution.
#include <gtest/gtest.h>

#include "aws/credentials/credentials_env.hpp"
#include "aws/credentials/credentials_ini.hpp"
#include "aws/credentials/credentials_profile.hpp"
#include "testing/aws_env.hpp"

namespace ic::aws {
namespace {

using testing::expect_no_secret;
using testing::FakeEnv;
using testing::kSecretKey;
using testing::kSessionToken;
using testing::lookup;
using testing::ScratchDir;

TEST(EnvironmentCredentials, ReadsKeyPairAndToken) {
  FakeEnv env{{"AWS_ACCESS_KEY_ID", "AKIDENV"},
              {"AWS_SECRET_ACCESS_KEY", std::string(kSecretKey)},
              {"AWS_SESSION_TOKEN", std::string(kSessionToken)}};
  EnvironmentCredentialsProvider provider(lookup(env));
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ(creds->access_key_id, "AKIDENV");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
  EXPECT_FALSE(creds->expiration.has_value());
}

TEST(EnvironmentCredentials, TokenIsOptional) {
  FakeEnv env{{"AWS_ACCESS_KEY_ID", "AKIDENV"}, {"AWS_SECRET_ACCESS_KEY", std::string(kSecretKey)}};
  const auto creds = EnvironmentCredentialsProvider(lookup(env)).credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_TRUE(creds->session_token.empty());
}

TEST(EnvironmentCredentials, UnsetOrEmptyIsNotFound) {
  for (const FakeEnv& env :
       {FakeEnv{}, FakeEnv{{"AWS_ACCESS_KEY_ID", ""}, {"AWS_SECRET_ACCESS_KEY", ""}}}) {
    const auto creds = EnvironmentCredentialsProvider(lookup(env)).credentials();
    ASSERT_FALSE(creds.has_value());
    EXPECT_EQ(creds.error().code, "CredentialsNotFound");
  }
}

TEST(EnvironmentCredentials, HalfAKeyPairIsInvalidAndNotEchoed) {
  FakeEnv env{{"AWS_SECRET_ACCESS_KEY", std::string(kSecretKey)},
              {"AWS_SESSION_TOKEN", std::string(kSessionToken)}};
  const auto creds = EnvironmentCredentialsProvider(lookup(env)).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  EXPECT_EQ(creds.error().error_class, ErrorClass::Permanent);
  expect_no_secret(creds.error());
}

TEST(IniParser, SectionsKeysCommentsAndSubProperties) {
  const auto ini = parse_ini(
      "# full-line comment\n"
      "; another\n"
      "[default]\n"
      "aws_access_key_id=AKID1\n"
      "region =  eu-west-1   # trailing comment\n"
      "[ profile dev ]  ; comment after a header\n"
      "aws_secret_access_key = abc#def;ghi\n"
      "output = json ;comment\n"
      "s3 =\n"
      "  max_concurrent_requests = 10\n"
      "not a key value line\n"
      "[default]\n"
      "region = us-east-2\r\n");
  ASSERT_TRUE(ini.contains("default"));
  ASSERT_TRUE(ini.contains("profile dev"));
  const auto& def = ini.at("default");
  EXPECT_EQ(def.at("aws_access_key_id"), "AKID1");
  EXPECT_EQ(def.at("region"), "us-east-2");  // repeated section merged, later key wins
  const auto& dev = ini.at("profile dev");
  EXPECT_EQ(dev.at("aws_secret_access_key"), "abc#def;ghi");  // no whitespace: data
  EXPECT_EQ(dev.at("output"), "json");
  EXPECT_EQ(dev.at("s3"), "\nmax_concurrent_requests = 10");
  EXPECT_FALSE(dev.contains("not a key value line"));
}

TEST(IniParser, KeysBeforeAnySectionAreIgnored) {
  const auto ini = parse_ini("orphan = 1\n[a]\nk = v");
  EXPECT_EQ(ini.size(), 1u);
  EXPECT_EQ(ini.at("a").at("k"), "v");
}

class ProfileCredentialsTest : public ::testing::Test {
 protected:
  ScratchDir dir;
  FakeEnv env{{"HOME", dir.path()}};
  ProfileCredentialsProvider provider{lookup(env)};
};

TEST_F(ProfileCredentialsTest, DefaultProfileFromHomeCredentialsFile) {
  dir.write(".aws/credentials", "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = " +
                                    std::string(kSecretKey) +
                                    "\naws_session_token=" + std::string(kSessionToken) + "\n");
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "AKIDDEF");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
}

TEST_F(ProfileCredentialsTest, AwsProfileSelectsSection) {
  dir.write(".aws/credentials",
            "[default]\naws_access_key_id=AKIDDEF\naws_secret_access_key=s1\n"
            "[dev]\naws_access_key_id=AKIDDEV\naws_secret_access_key=s2\n");
  env["AWS_PROFILE"] = "dev";
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ(creds->access_key_id, "AKIDDEV");
  EXPECT_EQ(creds->secret_access_key, "s2");
}

TEST_F(ProfileCredentialsTest, ConfigFileUsesProfilePrefix) {
  dir.write(".aws/config",
            "[dev]\naws_access_key_id=WRONG\naws_secret_access_key=wrong\n"
            "[profile dev]\naws_access_key_id=AKIDCFG\naws_secret_access_key=s3\n");
  env["AWS_PROFILE"] = "dev";
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ(creds->access_key_id, "AKIDCFG");
}

TEST_F(ProfileCredentialsTest, CredentialsFileWinsOverConfigFile) {
  dir.write(".aws/credentials", "[default]\naws_access_key_id=AKIDCRED\naws_secret_access_key=c\n");
  dir.write(".aws/config", "[default]\naws_access_key_id=AKIDCFG\naws_secret_access_key=k\n");
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ(creds->access_key_id, "AKIDCRED");
  EXPECT_EQ(creds->secret_access_key, "c");
}

TEST_F(ProfileCredentialsTest, ExplicitFileVariablesOverrideHome) {
  dir.write(".aws/credentials", "[default]\naws_access_key_id=HOME\naws_secret_access_key=h\n");
  env["AWS_SHARED_CREDENTIALS_FILE"] = dir.write(
      "elsewhere/creds", "[default]\naws_access_key_id=ELSEWHERE\naws_secret_access_key=e\n");
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ(creds->access_key_id, "ELSEWHERE");

  env["AWS_SHARED_CREDENTIALS_FILE"] = dir.path() + "/absent";
  env["AWS_CONFIG_FILE"] = dir.write(
      "elsewhere/config", "[profile default]\naws_access_key_id=CFG\naws_secret_access_key=c\n");
  const auto from_config = provider.credentials();
  ASSERT_TRUE(from_config.has_value());
  EXPECT_EQ(from_config->access_key_id, "CFG");
}

TEST_F(ProfileCredentialsTest, MissingFilesOrProfileIsNotFound) {
  auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");

  dir.write(".aws/credentials", "[default]\naws_access_key_id=A\naws_secret_access_key=s\n");
  env["AWS_PROFILE"] = "missing";
  creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
  EXPECT_NE(creds.error().message.find("missing"), std::string::npos);
}

TEST_F(ProfileCredentialsTest, NoHomeAndNoVariablesIsNotFound) {
  env.erase("HOME");
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
}

TEST_F(ProfileCredentialsTest, RoleProfilesAreReportedAsUnsupported) {
  dir.write(".aws/config",
            "[profile ops]\nrole_arn=arn:aws:iam::1:role/x\nsource_profile=default\n");
  env["AWS_PROFILE"] = "ops";
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
  EXPECT_NE(creds.error().message.find("not supported"), std::string::npos);
}

TEST_F(ProfileCredentialsTest, HalfAKeyPairIsInvalidAndNotEchoed) {
  dir.write(".aws/credentials", "[default]\naws_secret_access_key=" + std::string(kSecretKey) +
                                    "\naws_session_token=" + std::string(kSessionToken) + "\n");
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  expect_no_secret(creds.error());
}

// A shared file is read with a bound: a path that names a huge file (a log, a device) is a
// clear error, not an allocation without limit.
TEST_F(ProfileCredentialsTest, OversizedSharedFilesAreRefusedWithTheReason) {
  dir.write(".aws/credentials", "[default]\naws_access_key_id=AKID\naws_secret_access_key=s\n" +
                                    std::string(kMaxIniFileBytes, '#'));
  auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  EXPECT_EQ(creds.error().message,
            "profile 'default': the shared credentials file is larger than 1048576 bytes");

  dir.write(".aws/credentials", "[default]\naws_access_key_id=AKID\naws_secret_access_key=s\n");
  dir.write(".aws/config", std::string(kMaxIniFileBytes + 1, ';'));
  creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().message,
            "profile 'default': the shared config file is larger than 1048576 bytes");
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), std::nullopt);
}

TEST(IniFile, AbsentIsNoFileAndAnEmptyPathToo) {
  for (const char* path : {"/nonexistent/ic-config", ""}) {
    const auto file = read_ini_file(path);
    ASSERT_TRUE(file.has_value()) << path;
    EXPECT_FALSE(file->has_value()) << path;
  }
}

TEST(RegionResolution, EnvironmentThenProfileConfig) {
  ScratchDir dir;
  dir.write(".aws/config", "[default]\nregion = eu-west-1\n[profile dev]\nregion = ap-south-1\n");
  FakeEnv env{{"HOME", dir.path()}};
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), "eu-west-1");
  env["AWS_PROFILE"] = "dev";
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), "ap-south-1");
  env["AWS_DEFAULT_REGION"] = "us-west-2";
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), "us-west-2");
  env["AWS_REGION"] = "us-east-1";
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), "us-east-1");
}

TEST(RegionResolution, NothingConfiguredIsNullopt) {
  ScratchDir dir;
  dir.write(".aws/config", "[profile other]\nregion = eu-west-1\n");
  FakeEnv env{{"HOME", dir.path()}, {"AWS_REGION", ""}};
  EXPECT_EQ(resolve_region_with_profile(lookup(env)), std::nullopt);
}

}  // namespace
}  // namespace ic::aws
