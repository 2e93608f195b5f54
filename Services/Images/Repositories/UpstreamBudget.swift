import Foundation
import PostlyPostgres
import Synchronization

/// How many calls the service may still make to the image provider, counted in the images
/// database so that every instance spends one budget (two instances counting for themselves
/// made twice the calls the provider allows, and its 429 then stopped them all for an hour).
///
/// It counts the calls against an hourly limit (a sliding hour) and a monthly one (the
/// calendar month in UTC, or the period the upstream's `X-Ratelimit-Reset` announces), and
/// each user's calls against an hourly allowance, so that one user cannot spend everybody's
/// budget. It never exceeds a limit, believes `X-Ratelimit-Remaining` when it says less
/// remains than counted, and after an upstream 429 (which says nothing about when to come
/// back) calls nothing for an hour. The times are the service's clock's, bound as values.
final class UpstreamBudget: Sendable {
    /// Why no call may be made now, and from when one may.
    enum Refusal: Sendable, Equatable {
        case hourSpent(until: Date)
        case monthSpent(until: Date)
        case rateLimitedUpstream(until: Date)

        var until: Date {
            switch self {
            case .hourSpent(let until), .monthSpent(let until), .rateLimitedUpstream(let until): until
            }
        }
    }

    /// A counted call, and the end of the month it was counted in.
    struct Call: Sendable, Equatable {
        var id: Int64
        var monthEnd: Date
    }

    enum Reservation: Sendable, Equatable {
        /// The call is counted: make it.
        case granted(Call)
        /// The user has made their allowance of calls this hour; the next is theirs at `until`.
        case userLimited(until: Date)
        case refused(Refusal)
    }

    struct Remaining: Sendable, Equatable {
        var hour: Int
        var month: Int
    }

    static let migration = Migration(
        version: 1, name: "upstream budget",
        sql: """
            -- The calls to the image provider in the last hour, by every instance: the hour's
            -- budget and each user's allowance count them; a call leaves when its hour is over.
            CREATE TABLE upstream_calls (
                id bigserial PRIMARY KEY,
                user_id text NOT NULL,
                called_at timestamptz NOT NULL
            );
            CREATE INDEX upstream_calls_called_at ON upstream_calls (called_at);
            -- The month's count and its end, and the pause after an upstream 429: one row.
            CREATE TABLE upstream_budget (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                month_used integer NOT NULL,
                month_end timestamptz NOT NULL,
                halted_until timestamptz
            );
            """)

    /// The budget's row, as of one moment.
    private struct State {
        var monthUsed: Int
        var monthEnd: Date
        var haltedUntil: Date?
    }

    static let hour: TimeInterval = 3600
    /// A reset further away than this is not believed (Pexels' period is a month).
    static let longestPeriod: TimeInterval = 32 * 86_400

    let hourlyLimit: Int
    let monthlyLimit: Int
    let userHourlyLimit: Int
    let database: Database
    /// The last refusal of this instance, for the readiness notes (which never wait on the database).
    private let lastRefusal = Mutex<Refusal?>(nil)
    private let lastRemaining = Mutex<Remaining?>(nil)

    init(hourlyLimit: Int, monthlyLimit: Int, userHourlyLimit: Int, database: Database) {
        self.hourlyLimit = hourlyLimit
        self.monthlyLimit = monthlyLimit
        self.userHourlyLimit = userHourlyLimit
        self.database = database
    }

    /// Counts one call by `userId` at `now` against the user's allowance and both windows,
    /// or says why none may be made (and counts nothing).
    func reserve(userId: String, now: Date) async throws -> Reservation {
        let (reservation, remaining) = try await database.retryingTransaction { connection -> (Reservation, Remaining) in
            var state = try await Self.lockedState(at: now, in: connection)
            try await connection.execute("DELETE FROM upstream_calls WHERE called_at <= \(now - Self.hour)")
            let calls = try await connection.query(
                """
                SELECT count(*) AS hour, min(called_at) AS oldest,
                    count(*) FILTER (WHERE user_id = \(userId)) AS by_user,
                    min(called_at) FILTER (WHERE user_id = \(userId)) AS oldest_by_user
                FROM upstream_calls
                """)[0]
            var hourUsed = try calls.decode("hour", as: Int.self)
            let reservation: Reservation
            if try calls.decode("by_user", as: Int.self) >= userHourlyLimit {
                reservation = .userLimited(until: try calls.decode("oldest_by_user", as: Date.self) + Self.hour)
            } else if let haltedUntil = state.haltedUntil {
                reservation = .refused(.rateLimitedUpstream(until: haltedUntil))
            } else if hourUsed >= hourlyLimit {
                reservation = .refused(.hourSpent(until: try calls.decode("oldest", as: Date.self) + Self.hour))
            } else if state.monthUsed >= monthlyLimit {
                reservation = .refused(.monthSpent(until: state.monthEnd))
            } else {
                let call = try await connection.query(
                    "INSERT INTO upstream_calls (user_id, called_at) VALUES (\(userId), \(now)) RETURNING id")[0]
                hourUsed += 1
                state.monthUsed += 1
                try await Self.store(state, in: connection)
                reservation = .granted(Call(id: try call.decode("id"), monthEnd: state.monthEnd))
            }
            let remaining = state.haltedUntil == nil
                ? Remaining(hour: max(0, hourlyLimit - hourUsed), month: max(0, monthlyLimit - state.monthUsed))
                : Remaining(hour: 0, month: 0)
            return (reservation, remaining)
        }
        lastRefusal.withLock { last in
            switch reservation {
            case .refused(let refusal): last = refusal
            case .granted: last = nil
            case .userLimited: break
            }
        }
        lastRemaining.withLock { $0 = remaining }
        return reservation
    }

    /// Uncounts `call`, which never reached the provider (no connection was made): during an
    /// outage, clients retrying every few seconds spent their allowances, and then the hour's
    /// budget, on calls the provider never saw, and were refused for the rest of the hour once
    /// it was back. Not uncounted when the database cannot be written: it stays spent. A call
    /// of a month that has ended leaves the hour only: the new month never counted it.
    func giveBack(_ call: Call, now: Date) async {
        try? await database.retryingTransaction { connection in
            var state = try await Self.lockedState(at: now, in: connection)
            guard try await connection.execute("DELETE FROM upstream_calls WHERE id = \(call.id)") > 0, call.monthEnd > now else { return }
            state.monthUsed = max(0, state.monthUsed - 1)
            try await Self.store(state, in: connection)
        }
    }

    /// Takes in what the headers of `call`'s successful answer said. Not taken in when the
    /// database cannot be written: the answer is no less good, and the next one says it again.
    /// Nor when the call's month has ended: its `X-Ratelimit-Remaining` is of that month, and a
    /// call reserved just before a reset and answered after it began the new month as spent as
    /// the old one ended, for the whole month (the count only ever rises to the header's word).
    func believe(_ rateLimit: PexelsClient.RateLimit, of call: Call, now: Date) async {
        let (monthlyLimit, longestPeriod) = (self.monthlyLimit, Self.longestPeriod)
        guard call.monthEnd > now else { return }
        let monthLeft = try? await database.retryingTransaction { connection in
            var state = try await Self.lockedState(at: now, in: connection)
            if let reset = rateLimit.reset, reset > now, reset.timeIntervalSince(now) <= longestPeriod {
                state.monthEnd = reset
            }
            if let remaining = rateLimit.remaining {
                state.monthUsed = max(state.monthUsed, monthlyLimit - max(0, remaining))
            }
            try await Self.store(state, in: connection)
            return max(0, monthlyLimit - state.monthUsed)
        }
        if let monthLeft { lastRemaining.withLock { $0?.month = monthLeft } }
    }

    /// After an upstream 429: nothing is called for an hour. Returns until when. When the
    /// database cannot be written the halt is lost, and the next call meets the next 429,
    /// which halts again.
    func halt(now: Date) async -> Date {
        let until = now + Self.hour
        try? await database.retryingTransaction { connection in
            var state = try await Self.lockedState(at: now, in: connection)
            state.haltedUntil = until
            try await Self.store(state, in: connection)
        }
        lastRefusal.withLock { $0 = .rateLimitedUpstream(until: until) }
        lastRemaining.withLock { $0 = Remaining(hour: 0, month: 0) }
        return until
    }

    /// The calls left in each window (none while halted) as this instance last counted them,
    /// for the gauges, which then cost no statement of their own.
    var remaining: Remaining? { lastRemaining.withLock { $0 } }

    /// Whether this instance was last refused a call for a reason that still holds at `now`.
    func isSpent(now: Date) -> Bool {
        lastRefusal.withLock { $0.map { $0.until > now } ?? false }
    }

    /// The budget's row, locked until the transaction ends, as it stands at `now`: a month
    /// that ended starts afresh, a halt that ended is lifted.
    private static func lockedState(at now: Date, in connection: DatabaseConnection) async throws -> State {
        try await connection.execute(
            "INSERT INTO upstream_budget (month_used, month_end) VALUES (0, \(endOfMonth(after: now))) ON CONFLICT (only_row) DO NOTHING")
        let row = try await connection.query("SELECT month_used, month_end, halted_until FROM upstream_budget FOR UPDATE")[0]
        var state = State(
            monthUsed: try row.decode("month_used"), monthEnd: try row.decode("month_end"), haltedUntil: try row.decode("halted_until"))
        if now >= state.monthEnd {
            state.monthUsed = 0
            state.monthEnd = endOfMonth(after: now)
        }
        if let haltedUntil = state.haltedUntil, haltedUntil <= now { state.haltedUntil = nil }
        return state
    }

    private static func store(_ state: State, in connection: DatabaseConnection) async throws {
        try await connection.execute(
            "UPDATE upstream_budget SET month_used = \(state.monthUsed), month_end = \(state.monthEnd), halted_until = \(state.haltedUntil)")
    }

    static func endOfMonth(after date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let start = calendar.dateInterval(of: .month, for: date)!
        return start.end
    }
}
