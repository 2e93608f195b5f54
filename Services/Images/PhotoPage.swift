/// A page of photos in Pexels' own JSON shape (snake_case keys), so a client written for
/// Pexels only changes its base URL. Decoding the upstream answer into it and encoding it
/// again passes on exactly these keys and nothing else the upstream may add.
struct PhotoPage: Codable, Sendable {
    var page: Int
    var perPage: Int
    var totalResults: Int
    var photos: [Photo]
    var nextPage: String?
    var prevPage: String?

    enum CodingKeys: String, CodingKey {
        case page, photos
        case perPage = "per_page"
        case totalResults = "total_results"
        case nextPage = "next_page"
        case prevPage = "prev_page"
    }
}

struct Photo: Codable, Sendable {
    var id: Int
    var width: Int
    var height: Int
    var url: String
    var photographer: String
    var photographerURL: String
    var photographerID: Int
    var avgColor: String?
    var src: PhotoSources
    var liked: Bool?
    var alt: String?

    enum CodingKeys: String, CodingKey {
        case id, width, height, url, photographer, src, liked, alt
        case photographerURL = "photographer_url"
        case photographerID = "photographer_id"
        case avgColor = "avg_color"
    }
}

/// The eight sizes Pexels offers of every photo.
struct PhotoSources: Codable, Sendable {
    var original: String
    var large2x: String
    var large: String
    var medium: String
    var small: String
    var portrait: String
    var landscape: String
    var tiny: String
}
