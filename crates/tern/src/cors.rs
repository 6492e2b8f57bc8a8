//! CORS as a setting: [`Config::cors`](crate::Config::cors) made into
//! tower-http's `CorsLayer`, which [`App::build_with`](crate::App::build_with)
//! puts outermost of the app, before routing: a preflight of any path is
//! answered, and a `404` carries the headers too.
//!
//! tower-http panics on `*` with credentials; that layer is never built:
//! with credentials, `*` sends back the request's own origin (methods,
//! headers) instead, which production refuses
//! ([`Config::validate`](crate::Config::validate) names
//! `CORS_ALLOW_CREDENTIALS`).

use http::HeaderValue;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

use crate::config::{Cors, CorsList};

/// The layer for these settings.
pub(crate) fn layer(cors: &Cors) -> CorsLayer {
    let credentials = cors.allow_credentials;
    let origin = match &cors.allowed_origins {
        CorsList::Any if credentials => AllowOrigin::mirror_request(),
        CorsList::Any => AllowOrigin::any(),
        // Checked when read: `scheme://host[:port]` is a valid value.
        CorsList::Only(list) => {
            AllowOrigin::list(list.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
        }
    };
    let methods = match &cors.allowed_methods {
        CorsList::Any if credentials => AllowMethods::mirror_request(),
        CorsList::Any => AllowMethods::any(),
        CorsList::Only(list) => AllowMethods::list(list.iter().cloned()),
    };
    let headers = match &cors.allowed_headers {
        CorsList::Any if credentials => AllowHeaders::mirror_request(),
        CorsList::Any => AllowHeaders::any(),
        CorsList::Only(list) => AllowHeaders::list(list.iter().cloned()),
    };
    CorsLayer::new()
        .allow_origin(origin)
        .allow_methods(methods)
        .allow_headers(headers)
        .allow_credentials(credentials)
        .max_age(cors.max_age)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn production_refuses_any_origin_with_credentials() {
        let config = Config::from_settings([
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
            ("ALLOWED_HOSTS", "example.com"),
            ("CORS_ALLOWED_ORIGINS", "*"),
            ("CORS_ALLOW_CREDENTIALS", "true"),
        ])
        .expect("read");
        let err = config.validate().expect_err("refused");
        assert_eq!(err.setting(), "CORS_ALLOW_CREDENTIALS", "{err}");
        // Listed origins with credentials are fine in production.
        let config = Config::from_settings([
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
            ("ALLOWED_HOSTS", "example.com"),
            ("CORS_ALLOWED_ORIGINS", "https://app.example.com"),
            ("CORS_ALLOW_CREDENTIALS", "true"),
        ])
        .expect("read");
        config.validate().expect("listed origins");
        // Development mirrors instead: valid, and the layer builds.
        let config = Config::from_settings([
            ("CORS_ALLOWED_ORIGINS", "*"),
            ("CORS_ALLOWED_HEADERS", "*"),
            ("CORS_ALLOW_CREDENTIALS", "true"),
        ])
        .expect("read");
        config.validate().expect("development");
        let _ = layer(config.cors.as_ref().expect("cors"));
    }

    #[test]
    fn bad_values_name_the_setting() {
        for (name, value) in [
            ("CORS_ALLOWED_ORIGINS", "app.example.com"),
            ("CORS_ALLOWED_ORIGINS", "https://app.example.com/"),
            ("CORS_ALLOWED_ORIGINS", "https://app.example.com/path"),
            ("CORS_ALLOWED_ORIGINS", "https://app.example.com:99999"),
            ("CORS_ALLOWED_ORIGINS", "https://user@app.example.com"),
            ("CORS_ALLOWED_ORIGINS", "https://a.com, *"),
            ("CORS_ALLOWED_METHODS", "GET, P T"),
            ("CORS_ALLOWED_HEADERS", "x y"),
            ("CORS_ALLOW_CREDENTIALS", "maybe"),
            ("CORS_MAX_AGE", "soon"),
        ] {
            let err =
                Config::from_settings([("CORS_ALLOWED_ORIGINS", "https://a.com"), (name, value)])
                    .expect_err(value);
            assert_eq!(err.setting(), name, "{name}={value}: {err}");
        }
        let err = Config::from_settings([("CORS_ALLOWED_ORIGINS", "app.example.com")])
            .expect_err("no scheme");
        assert_eq!(
            err.to_string(),
            "CORS_ALLOWED_ORIGINS: `app.example.com` is not an origin like \
             https://app.example.com (scheme://host[:port], no path)"
        );
        // The others without the origins: set for nothing.
        let err = Config::from_settings([("CORS_MAX_AGE", "1h")]).expect_err("alone");
        assert_eq!(err.setting(), "CORS_MAX_AGE");
    }

    #[test]
    fn settings_and_defaults() {
        assert_eq!(
            Config::from_settings([("X", "y")]).expect("read").cors,
            None
        );
        let cors = Config::from_settings([(
            "CORS_ALLOWED_ORIGINS",
            "https://App.example.com, http://localhost:5173, http://[::1]:8080",
        )])
        .expect("read")
        .cors
        .expect("cors");
        assert_eq!(
            cors,
            Cors::new(CorsList::Only(vec![
                "https://app.example.com".to_owned(),
                "http://localhost:5173".to_owned(),
                "http://[::1]:8080".to_owned()
            ]))
        );
        let cors = Config::from_settings([
            ("CORS_ALLOWED_ORIGINS", "*"),
            ("CORS_ALLOWED_METHODS", "get,post"),
            ("CORS_ALLOWED_HEADERS", "X-Token"),
            ("CORS_ALLOW_CREDENTIALS", "yes"),
            ("CORS_MAX_AGE", "1h"),
        ])
        .expect("read")
        .cors
        .expect("cors");
        assert_eq!(cors.allowed_origins, CorsList::Any);
        assert_eq!(
            cors.allowed_methods,
            CorsList::Only(vec![http::Method::GET, http::Method::POST])
        );
        assert_eq!(
            cors.allowed_headers,
            CorsList::Only(vec![http::HeaderName::from_static("x-token")])
        );
        assert!(cors.allow_credentials);
        assert_eq!(cors.max_age, std::time::Duration::from_secs(3600));
    }
}
