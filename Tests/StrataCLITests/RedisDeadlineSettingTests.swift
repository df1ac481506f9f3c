import RedisCache
import Testing

@testable import strata

/// `--redis-connect-timeout` and `--redis-timeout` (or their variables) reach the tier's configuration: a
/// server across a slow link needs more than the library's 50 ms reply deadline.
@Suite struct RedisDeadlineSettingTests {
    private func configured(
        _ deadlines: [String: Double], environment: [String: String] = [:]
    ) throws -> RedisCacheConfiguration {
        var globals = GlobalOptions()
        globals.redisDeadlines = deadlines
        var configuration: RedisCacheConfiguration? = try RedisCacheConfiguration(url: "redis://127.0.0.1:1/ns")
        try RedisConnectionSettings(globals: globals, environment: environment).apply(to: &configuration)
        return try #require(configuration)
    }

    @Test func theRequestDeadlineSetsTheReplyAndWriteDeadlines() throws {
        let configuration = try configured(["redis-timeout": 2.5])
        #expect(configuration.readTimeout == .milliseconds(2_500))
        #expect(configuration.writeTimeout == .milliseconds(2_500))
        // The connect deadline keeps its default
        #expect(configuration.connectTimeout == RedisCacheConfiguration(namespace: "ns").connectTimeout)
    }

    @Test func theConnectDeadlineSetsOnlyTheConnectDeadline() throws {
        let defaults = RedisCacheConfiguration(namespace: "ns")
        let configuration = try configured(["redis-connect-timeout": 0.75])
        #expect(configuration.connectTimeout == .milliseconds(750))
        #expect(configuration.readTimeout == defaults.readTimeout)
        #expect(configuration.writeTimeout == defaults.writeTimeout)
    }

    @Test func theVariablesApplyWhenTheOptionsAreAbsentAndTheOptionsWin() throws {
        let environment = ["STRATA_REDIS_TIMEOUT": "1s", "STRATA_REDIS_CONNECT_TIMEOUT": "3s"]
        let fromVariables = try configured([:], environment: environment)
        #expect(fromVariables.readTimeout == .seconds(1))
        #expect(fromVariables.connectTimeout == .seconds(3))
        let fromOptions = try configured(["redis-timeout": 0.2], environment: environment)
        #expect(fromOptions.readTimeout == .milliseconds(200))
        #expect(fromOptions.connectTimeout == .seconds(3))
    }
}
