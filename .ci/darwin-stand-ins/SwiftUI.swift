// Stand-in for SwiftUI, for the Darwin type-check (.ci/darwin-typecheck.sh) only: just the environment API
// that Strata's SwiftUI support (Sources/CacheCore/EnvironmentValues+Cache.swift) and its documented example
// (.ci/darwin-examples/) use. Each declaration copies the Swift signature on its page of Apple's SwiftUI
// documentation (https://developer.apple.com/documentation/swiftui), cited beside it; availability of all of
// them: macOS 10.15, iOS 13, tvOS 13, watchOS 6.

/// https://developer.apple.com/documentation/swiftui/environmentkey
public protocol EnvironmentKey {
    associatedtype Value
    /// https://developer.apple.com/documentation/swiftui/environmentkey/defaultvalue
    static var defaultValue: Self.Value { get }
}

/// https://developer.apple.com/documentation/swiftui/environmentvalues
public struct EnvironmentValues: CustomStringConvertible {
    /// https://developer.apple.com/documentation/swiftui/environmentvalues/init()
    public init() {}
    /// https://developer.apple.com/documentation/swiftui/environmentvalues/subscript(_:)
    public subscript<K: EnvironmentKey>(key: K.Type) -> K.Value {
        get { K.defaultValue }
        set {}
    }
    public var description: String { "" }
}

/// https://developer.apple.com/documentation/swiftui/view
@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    /// https://developer.apple.com/documentation/swiftui/view (the `body` requirement)
    @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError() }
}

/// https://developer.apple.com/documentation/swiftui/dynamicproperty
public protocol DynamicProperty {}

/// https://developer.apple.com/documentation/swiftui/environment
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    /// https://developer.apple.com/documentation/swiftui/environment (`init(_:)` taking a key path)
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    /// https://developer.apple.com/documentation/swiftui/environment/wrappedvalue
    public var wrappedValue: Value { fatalError() }
}

/// https://developer.apple.com/documentation/swiftui/text
public struct Text: View {
    /// https://developer.apple.com/documentation/swiftui/text (`init(_:)` taking a `StringProtocol`)
    public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { fatalError() }
}

/// https://developer.apple.com/documentation/swiftui/modifiedcontent
public struct ModifiedContent<Content, Modifier> {}
extension ModifiedContent: View where Content: View {
    public var body: Never { fatalError() }
}

/// The modifier `environment(_:_:)` returns (a private type in SwiftUI, seen only as `some View`).
public struct _EnvironmentKeyWritingModifier<Value> {}

extension View {
    /// https://developer.apple.com/documentation/swiftui/view/environment(_:_:)
    nonisolated public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V)
        -> some View
    { ModifiedContent<Self, _EnvironmentKeyWritingModifier<V>>() }
}
